/* ohseven play page (ohseven-referee play --web): polls the seat's position (GET state),
 * draws it with the replay viewer's cards (cards.js), and posts the clicked move (POST answer).
 * Every text of a bot (its name) is set as text, never as HTML. */
(function () {
  "use strict";
  var C = window.ohsevenCards;
  var el = C.el, card = C.card, SUIT = C.SUIT, SUIT_NAME = C.SUIT_NAME;
  var match = /[?&]token=([^&#]+)/.exec(location.search);
  var token = match ? decodeURIComponent(match[1]) : "";
  var version = -1, state = null, picked = [], busy = false, done = false;
  var WORD = { pass: "pass", bid: "bid", play: "play a card" };

  function $(id) { return document.getElementById(id); }
  function signed(n) { return n > 0 ? "+" + n : String(n); }
  function call(method, path, body) {
    return fetch(path, {
      method: method,
      cache: "no-store",
      headers: { "X-Ohseven-Token": token, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body)
    }).then(function (r) {
      return r.json().then(function (j) { return { ok: r.ok, body: j }; });
    });
  }
  function who(s) {
    var name = state.names[s];
    return s === state.seat && name !== "you" ? name + " (you)" : name;
  }

  function showError(text) {
    var box = $("play-error");
    box.textContent = text || "";
    box.hidden = !text;
  }

  function send(answer) {
    if (busy || !state || !state.decision) return;
    busy = true;
    call("POST", "answer", { id: state.decision.id, answer: answer }).then(function (r) {
      busy = false;
      if (!r.ok) { showError(r.body.error || "refused"); return; }
      showError("");
      picked = [];
      poll();
    }, function () { busy = false; showError("The referee is not answering."); });
  }

  function renderStatus(s) {
    var status = $("status");
    var d = s.decision;
    status.dataset.turn = d ? "yes" : "no";
    document.body.dataset.decision = d ? d.kind : (s.finished ? "finished" : (s.over ? "over" : "waiting"));
    if (s.finished) {
      status.textContent = "The session is over" + (s.message ? ": " + s.message : "") + ". The totals are in the terminal.";
    } else if (d && d.kind === "pass") {
      status.textContent = "Your turn: pick " + d.count + " card" + (d.count > 1 ? "s" : "") + " to pass, then press Pass.";
    } else if (d && d.kind === "bid" && s.game === "oh-seven") {
      status.textContent = "Your turn: bid with a card (its rank is your bid; the highest bid names trump).";
    } else if (d && d.kind === "bid") {
      status.textContent = "Your turn: bid a number of tricks.";
    } else if (d) {
      status.textContent = "Your turn: " + WORD[d.kind] + ".";
    } else if (s.over) {
      status.textContent = "Game over: " + s.over.totals.map(function (t, i) { return who(i) + " " + t; }).join(", ");
    } else {
      status.textContent = "Waiting for the bots\u2026";
    }
  }

  function renderFelt(s) {
    var felt = $("felt");
    felt.textContent = "";
    var info = [];
    if (s.trump) info.push("Trump: " + SUIT[s.trump] + " " + SUIT_NAME[s.trump]);
    else info.push(s.game === "oh-seven" ? "Trump not chosen yet" : "No trump");
    if (s.trump_card) info.push((s.game === "oh-seven" ? "top bid " : "turned up ") + C.cardLabel(s.trump_card));
    if (s.dealer !== null && s.dealer !== undefined) info.push("dealer " + who(s.dealer));
    felt.appendChild(el("div", { cls: "info", text: info.join(" \u00b7 ") }));
    var played = el("div", { cls: "played", id: "trick" });
    var trick = s.trick, caption = null;
    if (!trick.length && s.last_trick) {
      trick = s.last_trick.cards.map(function (c, i) {
        return [(s.last_trick.leader + i) % s.players, c];
      });
      caption = "last trick, won by " + who(s.last_trick.winner);
    }
    trick.forEach(function (pair) {
      var win = caption && s.last_trick.winner === pair[0];
      var c = card(pair[1], "big" + (pair[1].charAt(1) === s.trump ? " trump" : "") + (win ? " win" : ""));
      played.appendChild(el("div", { cls: "slot" }, [c, el("div", { text: who(pair[0]) })]));
    });
    if (!trick.length) played.appendChild(el("div", { cls: "info", text: "No card played yet" }));
    felt.appendChild(played);
    if (caption) felt.appendChild(el("div", { cls: "info", text: caption }));
  }

  function renderSeats(s) {
    var body = $("seats").tBodies[0];
    body.textContent = "";
    s.names.forEach(function (name, i) {
      var row = el("tr", { "data-seat": String(i) }, [
        el("td", { cls: "text name", text: who(i) }),
        el("td", { text: s.bids[i] === null ? "" : String(s.bids[i]) }),
        el("td", { text: String(s.tricks_won[i]) }),
        el("td", { cls: "total", text: String(s.scores[i]) })
      ]);
      if (s.leader === i && !s.over) row.className = "lead";
      body.appendChild(row);
    });
  }

  function renderHand(s) {
    var hand = $("hand"), choices = $("choices");
    hand.textContent = "";
    choices.textContent = "";
    var d = s.decision;
    var cardMoves = d && (d.kind === "play" || d.kind === "pass" || (d.kind === "bid" && s.game === "oh-seven"));
    var pool = picked.slice();
    s.hand.forEach(function (name) {
      var legal = cardMoves && d.legal.indexOf(name) >= 0;
      var at = pool.indexOf(name);
      var chosen = at >= 0;
      if (chosen) pool.splice(at, 1);
      var extra = (name.charAt(1) === s.trump ? "trump" : "") + (legal ? " legal" : "") + (chosen ? " picked" : "");
      if (s.used_bids.indexOf(name) >= 0 && d && d.kind === "bid") extra += " used";
      var button = card(name, extra, "button");
      button.disabled = !legal;
      button.onclick = function () {
        if (d.kind !== "pass") { send(name); return; }
        var i = picked.indexOf(name);
        if (chosen && i >= 0) picked.splice(i, 1);
        else if (picked.length < d.count) picked.push(name);
        render(state);
      };
      hand.appendChild(button);
    });
    if (!s.hand.length) hand.appendChild(el("span", { cls: "muted", text: "\u2014" }));
    if (d && d.kind === "bid" && s.game !== "oh-seven") {
      d.legal.forEach(function (bid) {
        var b = el("button", { text: String(bid), title: "bid " + bid });
        b.dataset.bid = String(bid);
        b.onclick = function () { send(String(bid)); };
        choices.appendChild(b);
      });
    }
    var pass = $("send");
    pass.hidden = !(d && d.kind === "pass");
    pass.disabled = !(d && d.kind === "pass" && picked.length === d.count);
  }

  function renderBids(s) {
    var box = $("attempts");
    box.textContent = "";
    if (s.game === "oh-seven") {
      if (!s.attempts.length) box.appendChild(el("div", { cls: "muted small", text: "No bids shown yet this deal." }));
      s.attempts.forEach(function (a, n) {
        var row = el("div", { cls: "row" }, [el("span", { cls: "muted small", text: "#" + (n + 1) + " " })]);
        a.cards.forEach(function (c, i) {
          var node = card(c, a.top.indexOf(i) >= 0 ? "trump" : "");
          node.title = who(i) + " bids " + c;
          row.appendChild(node);
        });
        row.appendChild(el("span", { cls: "small", text: " sum " + a.sum + " " }));
        if (a.forced) row.appendChild(el("span", { cls: "forced", text: "re-bid (" + a.forced.replace(/_/g, " ") + ")" }));
        box.appendChild(row);
      });
    } else {
      var bids = s.bids.map(function (b, i) { return b === null ? null : who(i) + " " + b; }).filter(Boolean);
      box.appendChild(el("div", { cls: "small", text: bids.length ? bids.join(", ") : "No bids yet." }));
    }
  }

  function renderSheet(s) {
    var table = $("sheet");
    table.textContent = "";
    var head = el("tr", null, [el("th", { cls: "text", text: "Rd" })]);
    s.names.forEach(function (n, i) { head.appendChild(el("th", { cls: "nocase", text: who(i) })); });
    table.appendChild(el("thead", null, [head]));
    var body = el("tbody");
    s.sheet.forEach(function (row) {
      var tr = el("tr", null, [el("td", { cls: "text", text: String(row.round + 1) })]);
      row.points.forEach(function (p, i) {
        var text = row.bids[i] + "/" + row.tricks[i] + " " + signed(p) + (row.bonus[i] ? " +" + row.bonus[i] : "");
        tr.appendChild(el("td", { cls: p >= 0 ? "pos" : "neg", text: text, title: "bid/tricks, points (+bonus)" }));
      });
      body.appendChild(tr);
    });
    var total = el("tr", null, [el("td", { cls: "text", text: "Total" })]);
    s.scores.forEach(function (t) { total.appendChild(el("th", { text: String(t) })); });
    body.appendChild(total);
    table.appendChild(body);
  }

  function renderLog(s) {
    var log = $("log");
    log.textContent = "";
    s.log.forEach(function (line) { log.appendChild(el("li", { text: line })); });
    log.scrollTop = log.scrollHeight;
  }

  function render(s) {
    state = s;
    if (s.names) {
      $("play-title").textContent = "Game " + s.game_number + " of " + s.games + " \u00b7 round " + s.round + " of " + s.rounds;
      $("play-sub").textContent = s.game + " \u00b7 " + s.players + " players \u00b7 " + s.hand_size + " card" +
        (s.hand_size === 1 ? "" : "s") + " each \u00b7 you sit in seat " + s.seat;
      renderFelt(s);
      renderSeats(s);
      renderHand(s);
      renderBids(s);
      renderSheet(s);
      renderLog(s);
    }
    renderStatus(s);
    showError(s.error);
    document.body.dataset.version = String(s.version);
  }

  function poll() {
    return call("GET", "state").then(function (r) {
      if (!r.ok) { showError(r.body.error || "refused"); return; }
      if (r.body.version > version) {  // never an older answer that arrived late
        if (!r.body.decision || !state || !state.decision || r.body.decision.id !== state.decision.id) picked = [];
        version = r.body.version;
        render(r.body);
      }
      if (r.body.finished) done = true;
    }, function () {
      if (state && state.finished) return;
      showError("The referee is not answering (the session may be over).");
    });
  }

  $("send").onclick = function () { if (state && state.decision) send(picked.join(" ")); };
  $("leave").onclick = function () {
    if (!window.confirm("Leave the table? The game so far is saved with --replays.")) return;
    call("POST", "leave");
  };
  (function loop() {
    if (done) return;
    poll().then(function () { setTimeout(loop, 250); }, function () { setTimeout(loop, 1000); });
  })();
})();
