/* ohseven cards: how a card is drawn, shared by the replay viewer (replay.js) and the play
 * page (play.js). Text is always set as text (textContent), never as HTML. */
(function () {
  "use strict";
  var SUIT = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  var SUIT_NAME = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "cls") node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  }
  function cardLabel(card) {
    var rank = card.charAt(0) === "T" ? "10" : card.charAt(0);
    return rank + SUIT[card.charAt(1)];
  }
  function card(name, extra, tag) {
    var cls = "card " + name.charAt(1) + (extra ? " " + extra : "");
    var node = el(tag || "span", { cls: cls, text: cardLabel(name), title: name });
    node.dataset.card = name;
    return node;
  }

  window.ohsevenCards = { SUIT: SUIT, SUIT_NAME: SUIT_NAME, el: el, cardLabel: cardLabel, card: card };
})();
