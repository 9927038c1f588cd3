/* ohseven cards: how a card is drawn, shared by the replay viewer (replay.js) and the play
 * page (play.js), and the cue of a table wider than its box, shared by every page of the site
 * (site.js, replay.js). Text is always set as text (textContent), never as HTML. */
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

  /* --- a table wider than its box gets a visible cue: "more columns: scroll sideways" */
  function markOverflow(box) {
    var over = box.scrollWidth > box.clientWidth + 1;
    box.classList.toggle("overflows", over);
    var cue = box.previousElementSibling;
    var has = cue && cue.classList.contains("scroll-cue");
    if (over && !has) {
      cue = document.createElement("div");
      cue.className = "scroll-cue";
      cue.textContent = "more columns \u2192 scroll sideways";
      box.parentNode.insertBefore(cue, box);
    } else if (!over && has) {
      cue.parentNode.removeChild(cue);
    }
  }
  function watchOverflow() {
    Array.prototype.forEach.call(document.querySelectorAll(".scroll"), function (box) {
      markOverflow(box);
      if (typeof ResizeObserver !== "undefined") {
        var observer = new ResizeObserver(function () { markOverflow(box); });
        observer.observe(box);
        if (box.firstElementChild) observer.observe(box.firstElementChild);
      }
    });
  }
  window.ohsevenCards = {
    SUIT: SUIT, SUIT_NAME: SUIT_NAME, el: el, cardLabel: cardLabel, card: card,
    watchOverflow: watchOverflow
  };
})();
