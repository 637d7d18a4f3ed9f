/* Draws every <div class="chart" data-chart="<json_script id>"> with uPlot (vendored, static/vendor/uplot-1.6.32).
   Data shape: apps/web/charts.py (Chart.payload). Stacked series are drawn as cumulative bands whose
   legend still shows each series' own value. */
(function () {
  "use strict";
  var PALETTE = ["#2f5bd3", "#d9822b", "#1f7a4d", "#a4212b", "#7048b6", "#0f7c8c", "#8a6d00", "#5f6b7a"];
  var HEIGHT = 220;

  function fmt(unit) {
    return function (u, v) { return v == null ? "—" : (Math.round(v * 100) / 100) + (unit ? " " + unit : ""); };
  }

  function isolated(values) {
    for (var i = 0; i < values.length; i++) {
      if (values[i] == null) continue;
      if ((i === 0 || values[i - 1] == null) && (i === values.length - 1 || values[i + 1] == null)) return true;
    }
    return false;
  }

  function build(el) {
    var source = document.getElementById(el.dataset.chart);
    if (!source || el.dataset.drawn) return;
    el.dataset.drawn = "1";
    var data = JSON.parse(source.textContent);
    var raw = data.series.map(function (s) { return s.values; });
    var columns = raw.map(function (values) { return values.slice(); });
    // Stack: each stacked series becomes the running sum of itself and the stacked ones before it.
    var below = null;
    data.series.forEach(function (s, i) {
      if (!s.stacked) return;
      if (below) columns[i] = columns[i].map(function (v, j) { return (v || 0) + (below[j] || 0); });
      below = columns[i];
    });
    var bars = data.kind === "bars";
    var series = [{
      label: data.categories.length ? "Category" : "Time",
      value: data.categories.length ? function (u, v) { return v == null ? "" : data.categories[v]; } : undefined,
    }];
    data.series.forEach(function (s, i) {
      var color = PALETTE[i % PALETTE.length];
      series.push({
        label: s.label,
        stroke: color,
        width: bars ? 0 : 1.5,
        fill: s.stacked || bars ? color + (bars ? "cc" : "55") : undefined,
        // A value with no neighbour draws no line: show the points of such a series (one bucket of data).
        points: isolated(s.values) ? { show: true, size: 7 } : { show: false },
        paths: bars ? uPlot.paths.bars({ size: [0.6, 60] }) : undefined,
        value: function (u, v, si, idx) { return idx == null ? "—" : fmt(data.unit)(u, raw[si - 1][idx]); },
      });
    });
    // Draw stacked bands from the top down so each lower band paints over the one above it.
    var order = series.slice(1).map(function (_, i) { return i + 1; });
    var options = {
      width: Math.max(240, el.clientWidth),
      height: HEIGHT,
      series: series,
      scales: { x: data.categories.length
        ? { time: false, range: [-0.5, data.categories.length - 0.5] }
        : { time: true } },
      axes: [
        data.categories.length
          ? { values: function (u, ticks) { return ticks.map(function (t) { return data.categories[t] || ""; }); } }
          : {},
        { values: function (u, ticks) { return ticks.map(function (t) { return fmt(data.unit)(u, t); }); }, size: 60 },
      ],
      legend: { live: true },
    };
    var stacked = data.series.some(function (s) { return s.stacked; });
    if (stacked) {
      options.series = [series[0]].concat(order.slice().reverse().map(function (i) { return series[i]; }));
      columns = order.slice().reverse().map(function (i) { return columns[i - 1]; });
      raw = order.slice().reverse().map(function (i) { return raw[i - 1]; });
    }
    var chart = new uPlot(options, [data.x].concat(columns), el);
    if (!bars && data.series.some(function (s) { return isolated(s.values); })) el.dataset.points = "1";
    if (window.ResizeObserver) {
      new ResizeObserver(function () { chart.setSize({ width: Math.max(240, el.clientWidth), height: HEIGHT }); }).observe(el);
    }
  }

  function init(root) {
    if (typeof uPlot === "undefined") return;
    (root.querySelectorAll ? root : document).querySelectorAll(".chart[data-chart]").forEach(build);
  }

  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:afterSettle", function (event) { init(event.target); });
})();
