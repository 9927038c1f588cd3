#!/usr/bin/env node
// A random Oh-Seven / Oh Hell bot in Node.js, written from PROTOCOL.md alone.
//
// It connects a ZeroMQ DEALER socket to $OHSEVEN_ENDPOINT, says hello with $OHSEVEN_SECRET
// and answers every request with a random legal move (seeded by $OHSEVEN_SEED): a random
// element of "legal" for bids and plays, the first "count" cards of "legal" for passes.
// Events are ignored (a real bot would fold them into its view of the game). It exits on
// "shutdown", on an "error" from the referee, or after 5 minutes without any message.
//
// Install its two packages (zeromq, @msgpack/msgpack) next to it: npm ci --prefix <this folder>
// (the sandbox shows a bot its own folder only: a node_modules folder above it is invisible).
"use strict";

const zmq = require("zeromq");
const { encode, decode } = require("@msgpack/msgpack");

const IDLE_MS = 5 * 60 * 1000;

// mulberry32: a small seeded generator, so that a rerun plays the same moves
function rng(seed) {
  let state = Number(BigInt.asUintN(32, BigInt(seed))) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function answer(request, random) {
  const legal = request.legal;
  if (request.kind === "pass") return legal.slice(0, request.count);
  return legal[Math.floor(random() * legal.length)];
}

async function main() {
  const endpoint = process.env.OHSEVEN_ENDPOINT;
  const secret = process.env.OHSEVEN_SECRET;
  if (!endpoint || !secret) {
    console.error("node_bot: OHSEVEN_ENDPOINT and OHSEVEN_SECRET must be set (the referee starts this bot)");
    return 2;
  }
  const random = rng(process.env.OHSEVEN_SEED || "0");
  const sock = new zmq.Dealer({ linger: 1000, receiveTimeout: IDLE_MS });
  sock.connect(endpoint);
  await sock.send(encode({ type: "hello", protocol: 1, secret, bot: "node_bot 1.0" }));
  for (;;) {
    let frames;
    try {
      frames = await sock.receive();
    } catch (error) {
      console.error(`node_bot: no message from the referee for 5 minutes (${error.message}); exiting`);
      return 1;
    }
    let message;
    try {
      message = decode(frames[0]);
    } catch (error) {
      console.error(`node_bot: undecodable message ignored: ${error.message}`);
      continue;
    }
    if (message.type === "request") {
      const move = answer(message, random);
      await sock.send(encode({ type: "move", id: message.id, move }));
    } else if (message.type === "shutdown") {
      break;
    } else if (message.type === "error") {
      console.error(`node_bot: refused: ${message.reason}`);
      sock.close();
      return 1;
    }
    // "welcome" and "events" need nothing from a random bot
  }
  sock.close();
  return 0;
}

main().then(
  (status) => process.exit(status),
  (error) => {
    console.error(`node_bot: ${error.stack || error}`);
    process.exit(1);
  },
);
