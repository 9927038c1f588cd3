/* ohseven leaderboard site: sortable tables and the charts of the index and bot pages. The
 * page's data is embedded as JSON in <script id="page-data"> (no fetch: pages work from file://). */
(function () {
  "use strict";
  var PALETTE = ["#2f5fd0", "#d9480f", "#2b8a3e", "#ae3ec9", "#8d6e63", "#1098ad", "#c2255c",
    "#5c940d", "#f08c00", "#fcc419", "#862e9c", "#087f5b", "#495057", "#212529", "#74b816"];

  function color(i, alpha) {
    var hex = PALETTE[i % PALETTE.length];
    if (alpha === undefined) return hex;
    var n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + alpha + ")";
  }

  window.ohsevenCards.watchOverflow();  // cards.js: the cue of a table wider than its box

  /* --- sortable tables: click a <th>; cells sort by data-value (numbers when data-type=num) */
  function sortTable(table, column, type, descending) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[column].getAttribute("data-value"), y = b.cells[column].getAttribute("data-value");
      if (x === null) x = a.cells[column].textContent;
      if (y === null) y = b.cells[column].textContent;
      var r;
      if (type === "num") {
        var fx = x === "" ? -Infinity : parseFloat(x), fy = y === "" ? -Infinity : parseFloat(y);
        r = fx - fy;
      } else {
        r = x.localeCompare(y);
      }
      return descending ? -r : r;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, column) {
      th.addEventListener("click", function () {
        var descending = !th.classList.contains("desc");
        if (!th.classList.contains("asc") && !th.classList.contains("desc")) {
          descending = th.getAttribute("data-type") === "num" && column !== 0;
        }
        Array.prototype.forEach.call(heads, function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(descending ? "desc" : "asc");
        sortTable(table, column, th.getAttribute("data-type") || "text", descending);
      });
    });
  });

  var node = document.getElementById("page-data");
  if (!node || typeof Chart === "undefined") return;
  var data = JSON.parse(node.textContent);
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  Chart.defaults.animation = false;

  /* --- rating history: per bot an invisible upper line, a lower line filled up to it, and mu */
  if (data.history && document.getElementById("rating-chart")) {
    var datasets = [];
    data.history.forEach(function (bot, i) {
      var upper = bot.points.map(function (p) { return { x: p[0], y: p[1] + p[2] }; });
      var lower = bot.points.map(function (p) { return { x: p[0], y: p[1] - p[2] }; });
      var mu = bot.points.map(function (p) { return { x: p[0], y: p[1] }; });
      datasets.push({ label: bot.name + " +σ", data: upper, borderWidth: 0, pointRadius: 0, fill: false, band: true });
      datasets.push({ label: bot.name + " −σ", data: lower, borderWidth: 0, pointRadius: 0,
        fill: "-1", backgroundColor: color(i, 0.12), band: true });
      datasets.push({ label: bot.name, data: mu, borderColor: color(i), backgroundColor: color(i),
        borderWidth: 2, pointRadius: 0, pointHitRadius: 6, fill: false, tension: 0.15 });
    });
    new Chart(document.getElementById("rating-chart"), {
      type: "line",
      data: { datasets: datasets },
      options: {
        maintainAspectRatio: false,
        parsing: true,
        interaction: { mode: "nearest", intersect: false },
        scales: {
          x: { type: "linear", title: { display: true, text: "games played" }, min: 0, ticks: { precision: 0 } },
          y: { title: { display: true, text: "TrueSkill μ" } }
        },
        plugins: {
          legend: { labels: { filter: function (item, chart) { return !chart.datasets[item.datasetIndex].band; } } },
          tooltip: {
            filter: function (item) { return !item.dataset.band; },
            callbacks: {
              label: function (ctx) {
                var bot = data.history[Math.floor(ctx.datasetIndex / 3)];
                var p = bot.points[ctx.dataIndex];
                return bot.name + ": μ " + p[1].toFixed(2) + " ± " + p[2].toFixed(2) + " (after game " + p[0] + ")";
              }
            }
          }
        }
      }
    });
  }

  /* --- trump selection per suit */
  if (data.trumps && document.getElementById("trump-chart")) {
    var suitColor = { S: "#1d2330", H: "#c62828", D: "#1565c0", C: "#2e7d32" };
    new Chart(document.getElementById("trump-chart"), {
      type: "bar",
      data: {
        labels: data.trumps.map(function (t) { return t.label; }),
        datasets: [{ label: "share of rounds", data: data.trumps.map(function (t) { return t.rate * 100; }),
          backgroundColor: data.trumps.map(function (t) { return suitColor[t.suit] || "#888"; }) }]
      },
      options: { maintainAspectRatio: false, plugins: { legend: { display: false } },
        scales: { y: { beginAtZero: true, title: { display: true, text: "% of rounds" } } } }
    });
  }

  /* --- bot page: finishing positions and bids against tricks */
  if (data.ranks && document.getElementById("rank-chart")) {
    new Chart(document.getElementById("rank-chart"), {
      type: "bar",
      data: {
        labels: data.ranks.map(function (r) { return "rank " + r[0]; }),
        datasets: [{ label: "games", data: data.ranks.map(function (r) { return r[1]; }),
          backgroundColor: data.ranks.map(function (r, i) { return i === 0 ? "#2b8a3e" : "#2f5fd0"; }) }]
      },
      options: { maintainAspectRatio: false, plugins: { legend: { display: false } },
        scales: { y: { beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: "games" } } } }
    });
  }
  if (data.bid_tricks && document.getElementById("bid-chart")) {
    var pairs = data.bid_tricks, biggest = 1, top = 1;
    pairs.forEach(function (p) { biggest = Math.max(biggest, p[2]); top = Math.max(top, p[0], p[1]); });
    new Chart(document.getElementById("bid-chart"), {
      type: "bubble",
      data: {
        datasets: [
          { label: "made", data: pairs.filter(function (p) { return p[0] === p[1]; }).map(bubble),
            backgroundColor: "rgba(43,138,62,0.55)", borderColor: "#2b8a3e" },
          { label: "missed", data: pairs.filter(function (p) { return p[0] !== p[1]; }).map(bubble),
            backgroundColor: "rgba(47,95,208,0.45)", borderColor: "#2f5fd0" }
        ]
      },
      options: {
        maintainAspectRatio: false,
        scales: {
          x: { min: -0.5, max: top + 0.5, afterBuildTicks: integerTicks, title: { display: true, text: "bid" } },
          y: { min: -0.5, max: top + 0.5, afterBuildTicks: integerTicks, title: { display: true, text: "tricks won" } }
        },
        plugins: { tooltip: { callbacks: { label: function (ctx) {
          var raw = ctx.raw; return "bid " + raw.x + ", won " + raw.y + ": " + raw.n + " rounds";
        } } } }
      }
    });
  }
  function integerTicks(scale) {
    var ticks = [];
    for (var v = Math.ceil(scale.min); v <= scale.max; v++) ticks.push({ value: v });
    scale.ticks = ticks;
  }
  function bubble(p) {
    return { x: p[0], y: p[1], n: p[2], r: 3 + 14 * Math.sqrt(p[2] / Math.max(1, data.bid_tricks_max || 1)) };
  }
})();
