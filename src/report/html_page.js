/* pgolab HTML report (src/report/html_page.js): draws the charts from the JSON data block
 * with Chart.js, then writes what it drew into #pgolab-status, one line per chart
 * ("chart ID TYPE datasets=N points=a,b,... painted=PIXELS ink=PIXELS"), one line per canvas
 * on how it is laid out ("layout ID legend=ENTRIES legend_h=PX plot_h=PX canvas_h=PX": the
 * legend's entries and height and the plot area's height, CSS pixels), per tps chart the
 * values it plots and its whiskers ("values ID LABEL=v,v,... ...", "whiskers ID LABEL=lo..hi,...",
 * "-" for none), plus "errors=N" and
 * "resources=N" (requests the page made: none is right), for the browser test. */
(function () {
  'use strict';
  var COLORS = ['#1f5fa8', '#d9480f', '#2b8a3e', '#862e9c', '#c2255c', '#0b7285', '#5c940d',
                '#e67700', '#364fc7', '#495057'];
  var charts = [];

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function uniq(list) {
    var out = [];
    list.forEach(function (x) { if (out.indexOf(x) < 0) out.push(x); });
    return out;
  }
  function num(x) { return typeof x === 'number' && isFinite(x); }

  /* Error bars: a vertical line with caps from err[i][0] to err[i][1] at every point. */
  var whiskers = {
    id: 'pgolabWhiskers',
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx, y = chart.scales.y;
      chart.data.datasets.forEach(function (ds, i) {
        var meta = chart.getDatasetMeta(i);
        if (!ds.err || meta.hidden) return;
        ctx.save();
        ctx.strokeStyle = ds.borderColor;
        ctx.lineWidth = 1.5;
        meta.data.forEach(function (pt, j) {
          var e = ds.err[j];
          if (!e || !num(e[0]) || !num(e[1])) return;
          var y1 = y.getPixelForValue(e[0]), y2 = y.getPixelForValue(e[1]);
          ctx.beginPath();
          ctx.moveTo(pt.x, y1); ctx.lineTo(pt.x, y2);
          ctx.moveTo(pt.x - 5, y1); ctx.lineTo(pt.x + 5, y1);
          ctx.moveTo(pt.x - 5, y2); ctx.lineTo(pt.x + 5, y2);
          ctx.stroke();
        });
        ctx.restore();
      });
    }
  };

  function addChart(parent, id, config, small) {
    var box = el('div', small ? 'chart small' : 'chart');
    var canvas = el('canvas');
    canvas.id = id;
    box.appendChild(canvas);
    parent.appendChild(box);
    config.options = Object.assign({
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      plugins: {}
    }, config.options || {});
    /* a compact title and legend (a legend entry per variant): the plot keeps the canvas */
    config.options.plugins = Object.assign({
      title: { display: true, text: config.title, padding: { top: 4, bottom: 4 } },
      legend: { labels: { boxWidth: 24, padding: 6 } }
    }, config.options.plugins || {});
    /* the status block reads the pixels back once (willReadFrequently: no console warning) */
    var chart = new Chart(canvas.getContext('2d', { willReadFrequently: true }), config);
    charts.push({ id: id, chart: chart, canvas: canvas });
    return chart;
  }

  function axisTitle(text) { return { display: true, text: text }; }

  /* tps vs threads per variant: the seed-000 tps cells, the baseline's median and each
   * variant's change estimate applied to it (with fixed rounds the variant's median);
   * whiskers: the baseline's min-max over rounds, a variant's 95% CI of its change applied
   * to the baseline's median (the table's "change (95% CI)"). */
  function tpsCharts(parent, d, idx) {
    var rep = d.report, exp = rep.experiment;
    var variants = exp.variants.map(function (v) { return v.name; });
    var cells = rep.cells.filter(function (c) { return c.metric === 'tps' && c.threads !== null; });
    var threads = exp.settings.threads;
    var any = false;
    exp.settings.workloads.forEach(function (w, wi) {
      var datasets = variants.map(function (name, v) {
        var data = [], err = [];
        threads.forEach(function (t) {
          var c = cells.filter(function (x) {
            return x.workload === w && x.threads === t && x.variant === name;
          })[0];
          /* a variant's point: the change's own estimate on the baseline's median (under
           * --target-ci the paired one, not the ratio of medians), so it sits inside its
           * whiskers and says what the table and the verdict say */
          var vb = c && c.vs_baseline;
          data.push(vb && num(vb.ratio) && num(c.baseline_value) ? c.baseline_value * vb.ratio
                    : c && num(c.value) ? c.value : null);
          var e = null;
          if (c && c.baseline && c.rounds && c.rounds.n > 1) e = [c.rounds.min, c.rounds.max];
          else if (c && c.vs_baseline && c.vs_baseline.ratio_ci && num(c.baseline_value))
            e = [c.baseline_value * c.vs_baseline.ratio_ci[0], c.baseline_value * c.vs_baseline.ratio_ci[1]];
          err.push(e);
        });
        return { label: name, data: data, err: err, borderColor: COLORS[v % COLORS.length],
                 backgroundColor: COLORS[v % COLORS.length], pointRadius: 4, tension: 0 };
      });
      var lo = Infinity, hi = -Infinity;
      datasets.forEach(function (ds) {
        ds.data.forEach(function (x, j) {
          [x].concat(ds.err[j] || []).forEach(function (y) {
            if (num(y)) { lo = Math.min(lo, y); hi = Math.max(hi, y); }
          });
        });
      });
      if (!isFinite(lo)) return;
      any = true;
      var pad = (hi - lo) * 0.1 || hi * 0.05 || 1;
      addChart(parent, 'tps-' + idx + '-' + wi, {
        type: 'line',
        title: ['tps vs threads, ' + w, 'baseline: median of the rounds, min-max; a variant: its change (95% CI) on the baseline'],
        data: { labels: threads.map(String), datasets: datasets },
        options: { scales: { x: { title: axisTitle('threads') },
                             y: { title: axisTitle('tps'), suggestedMin: Math.max(0, lo - pad),
                                  suggestedMax: hi + pad } } },
        plugins: [whiskers]
      });
    });
    return any;
  }

  /* Latency percentile curves per variant (p50 .. p99.9, log scale), per workload and
   * thread count, from the merged histograms of the rounds. */
  function percentileCharts(parent, d, idx) {
    var levels = d.percentile_levels.map(function (p) { return 'p' + p; });
    var groups = uniq(d.percentiles.map(function (p) { return p.workload + ', ' + p.threads; }));
    var variants = d.report.experiment.variants.map(function (v) { return v.name; });
    groups.forEach(function (g, gi) {
      var rows = d.percentiles.filter(function (p) { return p.workload + ', ' + p.threads === g; });
      var datasets = rows.map(function (p) {
        var v = variants.indexOf(p.variant);
        return { label: p.variant, data: p.ms, borderColor: COLORS[v % COLORS.length],
                 backgroundColor: COLORS[v % COLORS.length], pointRadius: 3 };
      });
      var t = rows[0].threads;
      addChart(parent, 'pct-' + idx + '-' + gi, {
        type: 'line',
        title: 'latency percentiles (ms, log), ' + rows[0].workload + ', ' + t +
               ' thread' + (t === 1 ? '' : 's') + ', all rounds',
        data: { labels: levels, datasets: datasets },
        options: { scales: { x: { title: axisTitle('percentile') },
                             y: { type: 'logarithmic', title: axisTitle('latency (ms)') } } }
      });
    });
    return groups.length > 0;
  }

  /* A variant's runs give a band from this many runs on: p10-p90 (below it, min-max: with a
   * few runs every run is the band's edge or inside it). */
  var BAND_P_RUNS = 10;

  /* The q-quantile (0..1) of sorted numbers, linear between neighbours. */
  function quantile(sorted, q) {
    var h = (sorted.length - 1) * q, i = Math.floor(h);
    return i + 1 < sorted.length ? sorted[i] + (h - i) * (sorted[i + 1] - sorted[i]) : sorted[i];
  }

  /* One variant's runs (timeline rows) as a series per second: {x, y: median tps, lo, hi:
   * the band, n: runs with that second}, in time order. */
  function bandSeries(rows, pband) {
    var bySec = {}, secs = [];
    rows.forEach(function (r) {
      r.points.forEach(function (p) {
        if (!num(p[0]) || !num(p[1])) return;
        var k = String(Math.round(p[0] * 10) / 10);
        if (!bySec[k]) { bySec[k] = []; secs.push(Math.round(p[0] * 10) / 10); }
        bySec[k].push(p[1]);
      });
    });
    secs.sort(function (a, b) { return a - b; });
    return secs.map(function (x) {
      var ys = bySec[String(x)].slice().sort(function (a, b) { return a - b; });
      return { x: x, y: quantile(ys, 0.5), n: ys.length,
               lo: pband ? quantile(ys, 0.1) : ys[0],
               hi: pband ? quantile(ys, 0.9) : ys[ys.length - 1] };
    });
  }

  /* '#rrggbb' as [r, g, b], and as a CSS color of that opacity. */
  function rgb(hex) {
    var n = parseInt(String(hex).slice(1), 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }
  function rgba(hex, alpha) {
    var c = rgb(hex);
    return 'rgba(' + c[0] + ',' + c[1] + ',' + c[2] + ',' + alpha + ')';
  }

  /* Shaded bands behind the lines: a dataset's band[j] = {x, lo, hi}, filled between lo and
   * hi in the dataset's color, pale; one second alone is a short bar. Hidden with its line. */
  var bands = {
    id: 'pgolabBands',
    beforeDatasetsDraw: function (chart) {
      var ctx = chart.ctx, xs = chart.scales.x, ys = chart.scales.y, a = chart.chartArea;
      chart.data.datasets.forEach(function (ds, i) {
        if (!ds.band || !chart.isDatasetVisible(i)) return;
        var b = ds.band.filter(function (p) { return num(p.lo) && num(p.hi); });
        if (!b.length) return;
        ctx.save();
        ctx.beginPath();
        ctx.rect(a.left, a.top, a.right - a.left, a.bottom - a.top);
        ctx.clip();
        ctx.fillStyle = rgba(ds.borderColor, 0.2);
        ctx.beginPath();
        if (b.length === 1) {
          var y1 = ys.getPixelForValue(b[0].hi), y2 = ys.getPixelForValue(b[0].lo);
          ctx.rect(xs.getPixelForValue(b[0].x) - 6, y1, 12, Math.max(1, y2 - y1));
        } else {
          b.forEach(function (p, j) {
            var px = xs.getPixelForValue(p.x), py = ys.getPixelForValue(p.hi);
            if (j) ctx.lineTo(px, py); else ctx.moveTo(px, py);
          });
          for (var j = b.length - 1; j >= 0; j--)
            ctx.lineTo(xs.getPixelForValue(b[j].x), ys.getPixelForValue(b[j].lo));
          ctx.closePath();
        }
        ctx.fill();
        ctx.restore();
      });
    }
  };

  /* The per-second tps per variant: the median across the variant's runs as a line, their
   * spread (min-max, or p10-p90 with many runs) as a band; a legend entry per variant however
   * many rounds there are. */
  function timelineCharts(parent, d, idx) {
    var groups = uniq(d.timelines.map(function (r) { return r.workload + ', ' + r.threads; }));
    groups.forEach(function (g, gi) {
      var rows = d.timelines.filter(function (r) { return r.workload + ', ' + r.threads === g; });
      var vs = uniq(rows.map(function (r) { return r.v; })).sort(function (a, b) { return a - b; });
      var byV = vs.map(function (v) { return rows.filter(function (r) { return r.v === v; }); });
      var fewest = Math.min.apply(null, byV.map(function (rs) { return rs.length; }));
      var pband = fewest >= BAND_P_RUNS, top = 0;
      var datasets = byV.map(function (rs, i) {
        var v = vs[i], series = bandSeries(rs, pband), color = COLORS[v % COLORS.length];
        series.forEach(function (p) { top = Math.max(top, p.hi, p.y); });
        return { label: rs[0].variant + ' (' + rs.length + ' run' + (rs.length === 1 ? '' : 's') +
                        ')',
                 data: series.map(function (p) { return { x: p.x, y: p.y }; }), band: series,
                 borderColor: color, backgroundColor: color, borderWidth: 2,
                 pointRadius: series.length < 4 ? 3 : 0, tension: 0 };
      });
      var t = rows[0].threads;
      var most = Math.max.apply(null, byV.map(function (rs) { return rs.length; }));
      addChart(parent, 'time-' + idx + '-' + gi, {
        type: 'line',
        title: ['tps per second, ' + rows[0].workload + ', ' + t + ' thread' + (t === 1 ? '' : 's')]
               .concat(most > 1 ? ['median of each variant\'s runs; band: ' +
                                   (pband ? 'p10-p90' : 'min-max') + ' of the runs'] : []),
        data: { datasets: datasets },
        options: {
          parsing: true,
          scales: { x: { type: 'linear', title: axisTitle('time (s)') },
                    y: { title: axisTitle('tps'), beginAtZero: true, suggestedMax: top * 1.05 } },
          plugins: { tooltip: { callbacks: { label: function (c) {
            var p = c.dataset.band[c.dataIndex];
            return c.dataset.label + ': ' + Math.round(p.y) + ' tps' + (p.n > 1 ?
              ' (' + Math.round(p.lo) + ' .. ' + Math.round(p.hi) + ' over ' + p.n + ' runs)' : '');
          } } } }
        },
        plugins: [bands]
      });
    });
    return groups.length > 0;
  }

  /* The trainer x workload matrix as a heat map (a colored table): green = faster than the
   * baseline, red = slower, the intensity by the size of the change; pale when not
   * significant. */
  function trainerHeat(parent, d, idx) {
    var tr = d.trainers;
    if (!tr) return false;
    var max = 0;
    tr.rows.forEach(function (r) {
      r.cells.forEach(function (c) { if (c && num(c.change_pct)) max = Math.max(max, Math.abs(c.change_pct)); });
    });
    var box = el('div', 'heat');
    box.appendChild(el('h3', null, 'Trainer x workload: tps change of each trainer\'s pgo build ' +
                       'against the baseline (95% CI; * = trained on the measured workload)'));
    var table = el('table', 'heat'), head = el('tr');
    head.appendChild(el('th', null, 'trainer'));
    tr.workloads.forEach(function (w) { head.appendChild(el('th', null, w)); });
    table.appendChild(head);
    tr.rows.forEach(function (r) {
      var row = el('tr');
      row.appendChild(el('th', null, r.trainer));
      r.cells.forEach(function (c) {
        var td = el('td');
        if (c && num(c.change_pct)) {
          var a = max ? Math.abs(c.change_pct) / max : 0, alpha = (c.significant ? 0.25 + 0.6 * a : 0.12);
          td.style.background = (c.change_pct >= 0 ? 'rgba(26,127,55,' : 'rgba(198,40,40,') + alpha + ')';
          td.textContent = (c.significant ? '' : '~ ') + (c.change_pct >= 0 ? '+' : '') +
                           c.change_pct.toFixed(1) + '%';
          td.title = c.verdict || '';
          if (c.exam) td.className = 'exam';
        } else {
          td.textContent = '-';
        }
        row.appendChild(td);
      });
      table.appendChild(row);
    });
    box.appendChild(table);
    parent.appendChild(box);
    charts.push({ id: 'heat-' + idx, heat: table, cells: tr.rows.length * tr.workloads.length });
    return true;
  }

  /* The x labels of a bar chart's cells (keys by keyOf): "2 threads" when the cells share one
   * workload, else the workload (less the prefix all share) over the threads on two lines; a
   * label in one line of "workload threads" is too wide for a small chart's bars and turns,
   * eating the plot. */
  function cellLabels(cells, keys, keyOf) {
    var ws = uniq(cells.map(function (c) { return c.workload; }));
    var cut = ws.length > 1 ? commonPrefix(ws).length : 0;
    return keys.map(function (k) {
      var c = cells.filter(function (x) { return keyOf(x) === k; })[0];
      var t = c.threads + ' thread' + (c.threads === 1 ? '' : 's');
      return ws.length === 1 ? t : [c.workload.slice(cut), t];
    });
  }

  /* The prefix of the names up to a '_' that all share ("oltp_" of oltp_point_select and
   * oltp_read_only), to leave out where the rest tells them apart. */
  function commonPrefix(names) {
    var p = names[0];
    names.forEach(function (n) { while (n.indexOf(p) !== 0) p = p.slice(0, -1); });
    return p.slice(0, p.lastIndexOf('_') + 1);
  }

  /* A bar chart per metric key, a bar per variant in every (workload, threads) cell, the
   * value the tables show (the median over the cell's runs), under one heading. A metric that
   * is 0 or absent everywhere (idle% of a busy machine, the server's CPU of an embedded
   * library) says nothing as a chart; the table shows it. */
  function barCharts(parent, d, idx, keys, titles, heading, prefix) {
    var rep = d.report, exp = rep.experiment;
    var variants = exp.variants.map(function (v) { return v.name; });
    var drawn = false, grid = null;
    keys.forEach(function (key, k) {
      var cells = rep.cells.filter(function (c) { return c.metric === key && c.threads !== null; });
      if (!cells.some(function (c) { return num(c.value) && c.value !== 0; })) return;
      var keyOf = function (c) { return c.workload + ' ' + c.threads + 't'; };
      var cellKeys = uniq(cells.map(keyOf));
      var datasets = variants.map(function (name, v) {
        return { label: name, backgroundColor: COLORS[v % COLORS.length],
                 data: cellKeys.map(function (l) {
                   var c = cells.filter(function (x) {
                     return x.variant === name && keyOf(x) === l;
                   })[0];
                   return c && num(c.value) ? c.value : null;
                 }) };
      });
      if (!drawn) {
        parent.appendChild(el('h2', null, heading));
        grid = el('div', 'metrics');
        parent.appendChild(grid);
      }
      drawn = true;
      addChart(grid, prefix + '-' + idx + '-' + k, {
        type: 'bar', title: titles[k] + ' (median over the cell\'s runs)',
        data: { labels: cellLabels(cells, cellKeys, keyOf), datasets: datasets },
        options: { scales: { x: { ticks: { maxRotation: 0, autoSkip: false } },
                             y: { beginAtZero: true } } }
      }, true);
    });
    return drawn;
  }

  /* The system metrics per variant: seed 002's summary line. */
  function metricsCharts(parent, d, idx) {
    return barCharts(parent, d, idx, d.metrics_keys, d.metrics_titles,
                     'System metrics per variant', 'metric');
  }

  function drawExperiment(d, idx) {
    var parent = document.getElementById('charts-' + idx);
    if (!parent) return;
    parent.appendChild(el('h2', null, 'Charts'));
    if (d.report.experiment.settings.measure === 'instructions') {
      parent.appendChild(el('p', 'note', 'An instruction-count experiment (valgrind callgrind; ' +
                            'not time): no tps, latency or timeline charts.'));
      barCharts(parent, d, idx, ['est_cycles_per_txn', 'instr_per_txn', 'i1_miss_per_txn',
                                 'branch_miss_per_txn'],
                ['estimated cycles per transaction', 'instructions per transaction',
                 'simulated I1 cache misses per transaction',
                 'simulated branch mispredictions per transaction'],
                'Instructions per transaction', 'instr');
      return;
    }
    tpsCharts(parent, d, idx);
    percentileCharts(parent, d, idx);
    if (!timelineCharts(parent, d, idx))
      parent.appendChild(el('p', 'note', 'No per-second series stored for these runs.'));
    trainerHeat(parent, d, idx);
    metricsCharts(parent, d, idx);
  }

  /* Pixels a chart painted (non-transparent), to tell a drawn canvas from a blank one, and
   * "ink": the pixels inside its plot area in one of its datasets' colors (grid lines and
   * axes are grey), to tell a chart that drew its data from one that drew only its axes. */
  function pixels(c) {
    var canvas = c.canvas, chart = c.chart, ctx = canvas.getContext('2d');
    var px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    var r = chart.currentDevicePixelRatio || 1, a = chart.chartArea;
    var cols = chart.data.datasets.map(function (ds) { return rgb(ds.borderColor || ds.backgroundColor); });
    var x0 = Math.floor(a.left * r), x1 = Math.ceil(a.right * r);
    var y0 = Math.floor(a.top * r), y1 = Math.ceil(a.bottom * r);
    var painted = 0, ink = 0;
    for (var i = 0; i < px.length; i += 4) {
      if (!px[i + 3]) continue;
      painted++;
      var x = (i / 4) % canvas.width, y = Math.floor(i / 4 / canvas.width);
      if (x < x0 || x > x1 || y < y0 || y > y1 || px[i + 3] < 128) continue;
      for (var k = 0; k < cols.length; k++) {
        if (Math.abs(px[i] - cols[k][0]) + Math.abs(px[i + 1] - cols[k][1]) +
            Math.abs(px[i + 2] - cols[k][2]) < 60) { ink++; break; }
      }
    }
    return 'painted=' + painted + ' ink=' + ink;
  }

  /* How a canvas is shared out: a legend that grows with the data squeezes the plot. */
  function layout(c) {
    var chart = c.chart, a = chart.chartArea, lg = chart.legend;
    var items = lg && lg.options.display && lg.legendItems ? lg.legendItems.length : 0;
    return 'layout ' + c.id + ' legend=' + items + ' legend_h=' +
           Math.round(items && lg.height ? lg.height : 0) + ' plot_h=' +
           Math.round(a.bottom - a.top) + ' canvas_h=' + Math.round(chart.height);
  }

  function status() {
    var lines = charts.map(function (c) {
      if (c.heat) return 'chart ' + c.id + ' heatmap datasets=1 points=' +
                         c.heat.querySelectorAll('td').length + ' painted=1 ink=1';
      var counts = c.chart.data.datasets.map(function (ds) {
        return ds.data.filter(function (x) { return x !== null && x !== undefined; }).length;
      });
      return 'chart ' + c.id + ' ' + c.chart.config.type + ' datasets=' + counts.length +
             ' points=' + counts.join(',') + ' ' + pixels(c);
    });
    charts.forEach(function (c) { if (c.chart) lines.push(layout(c)); });
    /* what each tps chart plots, per dataset (a test compares the points with the report) */
    charts.forEach(function (c) {
      if (!c.chart || c.id.indexOf('tps-') !== 0) return;
      lines.push('values ' + c.id + ' ' + c.chart.data.datasets.map(function (ds) {
        return ds.label + '=' + ds.data.map(function (x) {
          return num(x) ? x.toFixed(3) : '-';
        }).join(',');
      }).join(' '));
      lines.push('whiskers ' + c.id + ' ' + c.chart.data.datasets.map(function (ds) {
        return ds.label + '=' + ds.err.map(function (e) {
          return e ? e[0].toFixed(3) + '..' + e[1].toFixed(3) : '-';
        }).join(',');
      }).join(' '));
    });
    lines.push('charts=' + charts.length);
    lines.push('errors=' + window.pgolabErrors.length +
               (window.pgolabErrors.length ? ' ' + window.pgolabErrors.join(' | ') : ''));
    var res = performance.getEntriesByType('resource');
    lines.push('resources=' + res.length + (res.length ? ' ' + res.map(function (r) { return r.name; }).join(' ') : ''));
    document.getElementById('pgolab-status').textContent = lines.join('\n') + '\n';
  }

  try {
    var data = JSON.parse(document.getElementById('pgolab-data').textContent);
    data.experiments.forEach(drawExperiment);
  } catch (e) {
    window.pgolabErrors.push('report script: ' + e.message);
    if (window.console) console.error(e);
  }
  status();
  window.addEventListener('load', status);
  /* print at the paper's width, not the window's */
  window.addEventListener('beforeprint', function () {
    charts.forEach(function (c) { if (c.chart) c.chart.resize(); });
  });
})();
