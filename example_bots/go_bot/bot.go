// A random Oh-Seven / Oh Hell bot in Go, written from PROTOCOL.md alone, with nothing but the
// standard library: zmtp.go is the ZeroMQ DEALER socket, msgpack.go the message format.
//
// It connects to $OHSEVEN_ENDPOINT, says hello with $OHSEVEN_SECRET, and answers every request
// with a random legal move (seeded from $OHSEVEN_SEED, so a match replays the same games): a
// random element of "legal" for bids and plays, the first "count" cards of "legal" (the hand)
// for passes. Events are ignored (a real bot would fold them into its view of the game). It
// exits on "shutdown", on an "error" from the referee, or when the connection ends.
//
// Build: make (go build: go_bot). Run: see docs/BOTS.md for the environment that fits the
// sandbox's limits.
package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strconv"
	"time"
)

func main() {
	endpoint, secret := os.Getenv("OHSEVEN_ENDPOINT"), os.Getenv("OHSEVEN_SECRET")
	if endpoint == "" || secret == "" {
		fmt.Fprintln(os.Stderr, "go_bot: OHSEVEN_ENDPOINT and OHSEVEN_SECRET must be set "+
			"(the referee starts this bot)")
		os.Exit(2)
	}
	// OHSEVEN_SEED is a decimal from 0 to 2^32 - 1: it needs 64 bits, not an int32
	seed := time.Now().UnixNano()
	if text := os.Getenv("OHSEVEN_SEED"); text != "" {
		parsed, err := strconv.ParseUint(text, 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "go_bot: OHSEVEN_SEED is not a number:", text)
			os.Exit(2)
		}
		seed = int64(parsed)
	}
	if err := play(endpoint, secret, rand.New(rand.NewSource(seed))); err != nil {
		fmt.Fprintln(os.Stderr, "go_bot:", err)
		os.Exit(1)
	}
}

// play serves one match: nil when it ended normally (shutdown, or the connection closed).
func play(endpoint, secret string, random *rand.Rand) error {
	socket, err := Connect(endpoint)
	if err != nil {
		return err
	}
	defer socket.Close()
	hello := map[string]any{"type": "hello", "protocol": 1, "secret": secret, "bot": "go_bot 1.0"}
	if err := send(socket, hello); err != nil {
		return err
	}
	for {
		data, err := socket.Receive()
		if errors.Is(err, io.EOF) {
			return nil // the referee closed the connection: the match is over
		} else if err != nil {
			return err
		}
		decoded, err := Decode(data)
		message, isMap := decoded.(map[string]any)
		if err != nil || !isMap {
			fmt.Fprintln(os.Stderr, "go_bot: undecodable message ignored:", err)
			continue
		}
		switch message["type"] {
		case "request":
			if move := answer(message, random); move != nil {
				if err := send(socket, move); err != nil {
					return err
				}
			}
		case "shutdown":
			return nil
		case "error":
			return fmt.Errorf("refused: %v", message["reason"])
		}
		// "welcome" and "events" need nothing from a random bot
	}
}

func send(socket *Zmtp, message map[string]any) error {
	data, err := Encode(message)
	if err != nil {
		return err
	}
	return socket.Send(data)
}

// answer is {"type": "move", "id": id, "move": ...} for a request, or nil if it makes no sense.
func answer(request map[string]any, random *rand.Rand) map[string]any {
	id, hasID := request["id"].(int64)
	legal, _ := request["legal"].([]any)
	if !hasID || len(legal) == 0 {
		fmt.Fprintln(os.Stderr, "go_bot: a request without id or legal moves; ignored")
		return nil
	}
	var move any
	if request["kind"] == "pass" {
		count, _ := request["count"].(int64)
		if count < 0 {
			count = 0
		} else if count > int64(len(legal)) {
			count = int64(len(legal))
		}
		move = legal[:count]
	} else {
		move = legal[random.Intn(len(legal))] // a card, or an Oh Hell bid (int64)
	}
	return map[string]any{"type": "move", "id": id, "move": move}
}
