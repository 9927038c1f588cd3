/* ohseven replay viewer: replay.html?game=<id> loads replays/<id>.js (a script tag, so that it
 * works from file://), which calls ohsevenReplay(data). Frames arrive as deltas (see
 * publish.compact_frames) and are expanded here. */
(function () {
  "use strict";
  var cards = window.ohsevenCards;  // cards.js: how a card is drawn
  var SUIT = cards.SUIT, SUIT_NAME = cards.SUIT_NAME;
  var el = cards.el, cardLabel = cards.cardLabel, card = cards.card;
  var watchOverflow = cards.watchOverflow;  // the cue of a table wider than its box
  var data = null, frames = [], index = 0, faultAt = {};


  function $(id) { return document.getElementById(id); }
  function signed(n) { return n > 0 ? "+" + n : String(n); }

  function expand(deltas) {
    var out = [];
    deltas.forEach(function (delta, i) {
      if (i === 0) { out.push(Object.assign({}, delta)); return; }
      var frame = Object.assign({}, out[i - 1]);
      Object.keys(delta).forEach(function (key) {
        if (key === "hands") {
          var hands = frame.hands.slice();
          Object.keys(delta.hands).forEach(function (seat) { hands[+seat] = delta.hands[seat]; });
          frame.hands = hands;
        } else {
          frame[key] = delta[key];
        }
      });
      out.push(frame);
    });
    return out;
  }

  function fail(message) {
    var box = $("replay-error");
    box.textContent = message;
    box.hidden = false;
  }

  function renderFelt(f) {
    var felt = $("felt");
    felt.textContent = "";
    var info = [];
    if (f.trump) info.push("Trump: " + SUIT[f.trump] + " " + SUIT_NAME[f.trump]);
    else if (f.kind !== "deal" || data.game !== "oh-seven") info.push(data.game === "oh-seven" ? "Trump not chosen yet" : "No trump");
    if (f.trump_card) info.push(data.game === "oh-seven" ? "top bid " + cardLabel(f.trump_card) : "turned up " + cardLabel(f.trump_card));
    if (f.dealer !== null && f.dealer !== undefined) info.push("dealer " + data.players[f.dealer]);
    if (f.kind === "play" || f.kind === "trick") info.push("trick " + (f.trick_no + (f.kind === "trick" ? 0 : 1)) + " of " + f.hand_size);
    felt.appendChild(el("div", { cls: "info", text: info.join(" \u00b7 ") }));
    var played = el("div", { cls: "played", id: "trick" });
    (f.trick || []).forEach(function (pair) {
      var seat = pair[0], name = pair[1];
      var win = f.winner === seat && f.kind === "trick";
      var c = card(name, "big" + (name.charAt(1) === f.trump ? " trump" : "") + (win ? " win" : ""));
      played.appendChild(el("div", { cls: "slot" }, [c, el("div", { text: data.players[seat] })]));
    });
    if (!f.trick || !f.trick.length) {
      played.appendChild(el("div", { cls: "info", text: f.kind === "over" ? "Final totals below" : "" }));
    }
    felt.appendChild(played);
  }

  function renderSeats(f) {
    var body = $("seats").tBodies[0];
    body.textContent = "";
    var n = data.players.length;
    for (var s = 0; s < n; s++) {
      var hand = el("td", { cls: "hand" });
      (f.hands[s] || []).forEach(function (name) {
        hand.appendChild(card(name, name.charAt(1) === f.trump ? "trump" : ""));
      });
      if (!f.hands[s] || !f.hands[s].length) hand.appendChild(el("span", { cls: "muted", text: "\u2014" }));
      var bid = f.bids[s] === null || f.bids[s] === undefined ? "" : String(f.bids[s]);
      var row = el("tr", { "data-seat": String(s) }, [
        el("td", { cls: "text name", text: data.players[s] }),
        hand,
        el("td", { text: bid }),
        el("td", { text: f.bids[s] === null ? "" : String(f.tricks_won[s]) }),
        el("td", { text: f.points ? signed(f.points[s]) : (f.bonus[s] ? "+" + f.bonus[s] + " bonus" : "") }),
        el("td", { cls: "total", text: String(f.totals[s]) })
      ]);
      if (f.leader === s && f.kind !== "trick" && f.kind !== "score" && f.kind !== "over") row.className = "lead";
      if (f.kind === "trick" && f.winner === s) row.className = "won";
      body.appendChild(row);
    }
  }

  function renderAttempts(f) {
    var box = $("attempts");
    box.textContent = "";
    if (data.game === "oh-seven") {
      if (!f.attempts.length) box.appendChild(el("div", { cls: "muted small", text: "No bids yet this deal." }));
      f.attempts.forEach(function (a) {
        var row = el("div", { cls: "row" }, [el("span", { cls: "muted small", text: "#" + a.attempt + " " })]);
        a.cards.forEach(function (c, seat) {
          var top = a.top.indexOf(seat) >= 0;
          var node = card(c, top ? "trump" : "");
          node.title = data.players[seat] + " bids " + c;
          row.appendChild(node);
        });
        row.appendChild(el("span", { cls: "small", text: " sum " + a.sum + " " }));
        if (a.forced) row.appendChild(el("span", { cls: "forced", text: "re-bid (" + a.forced.replace(/_/g, " ") + ")" }));
        box.appendChild(row);
      });
    } else {
      var bids = f.bids.map(function (b, s) { return b === null ? null : data.players[s] + " " + b; }).filter(Boolean);
      box.appendChild(el("div", { cls: "small", text: bids.length ? bids.join(", ") : "No bids yet." }));
    }
    var passes = $("passes");
    passes.textContent = "";
    if (f.passes && f.passes.length) {
      passes.appendChild(el("h3", { text: "Passes" }));
      f.passes.forEach(function (p) {
        var row = el("div", { cls: "row small" }, [el("span", { text: data.players[p.giver] + " \u2192 " + data.players[p.receiver] + ": " })]);
        p.cards.forEach(function (c) { row.appendChild(card(c)); });
        passes.appendChild(row);
      });
    }
  }

  function renderSheet(f) {
    var table = $("sheet");
    table.textContent = "";
    var head = el("tr", null, [el("th", { cls: "text", text: "Rd" })]);
    data.players.forEach(function (p) { head.appendChild(el("th", { text: p })); });
    table.appendChild(el("thead", null, [head]));
    var body = el("tbody");
    data.sheet.slice(0, f.scored).forEach(function (row) {
      var tr = el("tr", row.round === f.scored - 1 && f.kind === "score" ? { cls: "current" } : null,
        [el("td", { cls: "text", text: String(row.round + 1) })]);
      row.points.forEach(function (p, s) {
        var text = row.bids[s] + "/" + row.tricks[s] + " " + signed(p) + (row.bonus[s] ? " +" + row.bonus[s] : "");
        tr.appendChild(el("td", { cls: p >= 0 ? "pos" : "neg", text: text, title: "bid/tricks, points (+bonus)" }));
      });
      body.appendChild(tr);
    });
    var total = el("tr", null, [el("td", { cls: "text", text: "Total" })]);
    f.totals.forEach(function (t) { total.appendChild(el("th", { text: String(t) })); });
    body.appendChild(total);
    table.appendChild(body);
  }

  function show(i) {
    index = Math.max(0, Math.min(frames.length - 1, i));
    var f = frames[index];
    var where = "Round " + (f.round + 1) + (f.deal ? " (deal " + (f.deal + 1) + ")" : "");
    var cap = $("caption");
    cap.textContent = "";
    cap.appendChild(el("span", { cls: "where", text: where }));
    cap.appendChild(document.createTextNode(f.caption));
    var fault = faultAt[index];
    if (fault) {  // the move shown was not the bot's own answer
      var by = fault.status === "bot_error" ? "its SDK's substitute" : "the referee's fallback";
      cap.appendChild(el("span", { cls: "tag bad fault-mark", text: fault.status + ": " + by }));
    }
    document.body.dataset.fault = fault ? fault.status : "";
    cap.dataset.kind = f.kind;
    renderFelt(f);
    renderSeats(f);
    renderAttempts(f);
    renderSheet(f);
    $("slider").value = String(index);
    $("position").textContent = "step " + (index + 1) + " / " + frames.length;
    $("first").disabled = $("prev").disabled = index === 0;
    $("last").disabled = $("next").disabled = index === frames.length - 1;
    $("prev-trick").disabled = !data.tricks.some(function (t) { return t < index; });
    $("next-trick").disabled = !data.tricks.some(function (t) { return t > index; });
    $("prev-round").disabled = !data.rounds.some(function (t) { return t < index; });
    $("next-round").disabled = !data.rounds.some(function (t) { return t > index; });
    document.body.dataset.frame = String(index);
  }

  function after(list) { for (var i = 0; i < list.length; i++) if (list[i] > index) return list[i]; return index; }
  function before(list) { for (var i = list.length - 1; i >= 0; i--) if (list[i] < index) return list[i]; return index; }

  window.ohsevenReplay = function (replay) {
    data = replay;
    frames = expand(replay.frames);
    $("replay-title").textContent = "Game " + replay.id;
    var ranks = replay.result.ranks || [];
    var sub = replay.game + " \u00b7 " + replay.players.length + " players";
    if (replay.seed !== null && replay.seed !== undefined) sub += " \u00b7 seed " + replay.seed;
    var rules = Object.keys(replay.rules || {}).filter(function (k) { return replay.rules[k] !== false; });
    if (rules.length) sub += " \u00b7 rules: " + rules.map(function (k) { return k + "=" + replay.rules[k]; }).join(", ");
    if (replay.result.totals && replay.result.totals.length) {
      sub += " \u00b7 result: " + replay.players.map(function (p, s) {
        return p + " " + replay.result.totals[s] + (ranks[s] === 1 ? " \u2605" : "");
      }).join(", ");
    } else {
      sub += " \u00b7 unfinished: stopped before its end";
    }
    $("replay-sub").textContent = sub;
    faultAt = {};
    if (replay.faults && replay.faults.length) {
      var box = $("faults");
      box.appendChild(el("h3", { text: "Faults" }));
      // one entry per (seat, status, location): a bug met in many tricks is listed once
      var groups = [], byKey = {};
      replay.faults.forEach(function (fault) {
        var key = fault.seat + "|" + fault.status + "|" + (fault.location || fault.detail);
        if (!byKey[key]) { byKey[key] = { first: fault, all: [] }; groups.push(byKey[key]); }
        byKey[key].all.push(fault);
        if (fault.step) faultAt[fault.step - 1] = fault;
      });
      groups.forEach(function (group) {
        var f = group.first;
        var head = el("div", { cls: "small fault-head" }, [
          el("span", { cls: "tag bad", text: f.status + (group.all.length > 1 ? " \u00d7" + group.all.length : "") }),
          el("span", { text: " " + data.players[f.seat] + (f.location ? ": " + f.location : "") })
        ]);
        var moves = el("div", { cls: "small fault-moves" });
        group.all.forEach(function (fault) {
          if (!fault.step) return;
          var where = "move " + fault.move + (fault.round ? " (round " + fault.round + (fault.trick ? ", trick " + fault.trick : "") + ")" : "");
          var go = el("button", { type: "button", cls: "linkish", text: where, "data-step": String(fault.step) });
          go.onclick = function () { show(fault.step - 1); };
          moves.appendChild(go);
        });
        var detail = f.detail ? el("details", null, [
          el("summary", { text: (f.detail.split("\n")[0] || f.status) }),
          el("pre", { cls: "trace", text: f.detail })
        ]) : null;
        box.appendChild(el("div", { cls: "fault" }, [head, moves, detail]));
      });
    }
    var slider = $("slider");
    slider.max = String(frames.length - 1);
    slider.addEventListener("input", function () { show(+slider.value); });
    $("first").onclick = function () { show(0); };
    $("last").onclick = function () { show(frames.length - 1); };
    $("prev").onclick = function () { show(index - 1); };
    $("next").onclick = function () { show(index + 1); };
    $("next-trick").onclick = function () { show(after(data.tricks)); };
    $("prev-trick").onclick = function () { show(before(data.tricks)); };
    $("next-round").onclick = function () { show(after(data.rounds)); };
    $("prev-round").onclick = function () { show(before(data.rounds)); };
    document.addEventListener("keydown", function (e) {
      var keys = {
        ArrowRight: e.shiftKey ? "next-trick" : "next", ArrowLeft: e.shiftKey ? "prev-trick" : "prev",
        PageDown: "next-round", PageUp: "prev-round", Home: "first", End: "last"
      };
      if (keys[e.key]) { e.preventDefault(); $(keys[e.key]).click(); }
    });
    $("replay").hidden = false;
    var start = /[?&]step=(\d+)/.exec(location.search);
    var move = /[?&]move=(\d+)/.exec(location.search);  // a fault's move (a bot page's link)
    var shown = move && (replay.faults || []).filter(function (f) { return f.move === +move[1] && f.step; })[0];
    show(shown ? shown.step - 1 : start ? +start[1] - 1 : 0);  // step=n: from 1, as counted
    watchOverflow();
  };

  if (window.ohsevenInline) {  // a standalone page (ohseven-referee view): the data is inline
    window.ohsevenReplay(window.ohsevenInline);
    return;
  }
  var match = /[?&]game=([A-Za-z0-9._-]+)/.exec(location.search);
  if (!match) {
    fail("No game given: open this page as replay.html?game=<game id> (links are on the games page).");
    return;
  }
  var script = document.createElement("script");
  script.src = "replay-data/" + match[1] + ".js";
  script.onerror = function () { fail("No replay was recorded for game " + match[1] + "."); };
  document.body.appendChild(script);
})();
