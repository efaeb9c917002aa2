  // -- the bots' own output (referee view --with-stderr) ---------------------------------

  var OUT = perSeat(data.stderr, function (o, bySeq) {
    var raised = {};
    (Array.isArray(o.raised) ? o.raised : []).forEach(function (entry) {
      if (Array.isArray(entry) && typeof entry[1] === 'string') raised[String(entry[0])] = entry[1];
    });
    return {
      bySeq: bySeq, end: o.end || [], untimed: o.untimed || [], file: o.file || '',
      skipped: o.skipped || 0, lines: o.lines || 0, raised: raised
    };
  });

  // What the seat's kit said of this move: the bot's own code raised on its turn and the
  // kit played its fallback (docs/kits.md, section 5); null when it said nothing.
  function raisedAt(m) {
    var o = m && validSeat(m.seat) ? OUT[m.seat] : null;
    if (!o || !sees(m.seat)) return null;
    return o.raised[String(m.seq)] || null;
  }

  function outputOf(m) { return linesAt(OUT, m); }

  function outputBox(title, lines) {
    var box = el('div', 'output');
    box.appendChild(el('h3', '', title + ' (' + lines.length + (lines.length === 1 ? ' line)' : ' lines)')));
    var pre = el('ol', 'output-lines mono');
    lines.forEach(function (line) {
      var li = el('li');
      li.appendChild(el('span', 'at', (line[0] / 1000).toFixed(3) + ' s'));
      li.appendChild(el('span', 'text', line[1]));
      pre.appendChild(li);
    });
    box.appendChild(pre);
    return box;
  }

  function endOutput(panel) {
    for (var s = 0; s < SEATS; s++) {
      var o = OUT[s];
      if (!o || !sees(s) || !o.end.length) continue;
      panel.appendChild(outputBox(seatName(s) + ' after its last move', o.end));
    }
  }

  function renderOutputPanel() {
    var panel = $('output-panel');
    var box = clear($('output'));
    var any = false;
    var where = {};
    M.hands.forEach(function (H, h) {
      H.moves.forEach(function (m, i) { where[String(m.seq)] = [h, i + 1]; });
    });
    for (var s = 0; s < SEATS; s++) {
      var o = OUT[s];
      if (!o || !sees(s)) continue;
      any = true;
      var details = el('details', 'seat-output');
      details.setAttribute('data-seat', String(s));
      details.appendChild(el('summary', '', seatName(s) + ': ' + o.lines + ' line' + (o.lines === 1 ? '' : 's') +
        ' (' + o.file + ')' + (o.skipped ? ', ' + o.skipped + ' in the middle left out' : '')));
      var list = el('ol', 'output-lines mono');
      Object.keys(o.bySeq).forEach(function (seq) {
        var at = where[seq];
        o.bySeq[seq].forEach(function (line, i) {
          var li = el('li');
          li.appendChild(el('span', 'at', (line[0] / 1000).toFixed(3) + ' s'));
          if (at && i === 0) {
            var go = el('button', 'link', 'hand ' + M.hands[at[0]].deal.hand + ', move ' + at[1]);
            go.addEventListener('click', function () { stop(); goTo(at[0], at[1]); });
            li.appendChild(go);
          }
          li.appendChild(el('span', 'text', line[1]));
          list.appendChild(li);
        });
      });
      o.end.concat(o.untimed.map(function (t) { return [null, t]; })).forEach(function (line) {
        var li = el('li');
        li.appendChild(el('span', 'at', line[0] === null ? 'time unknown' : (line[0] / 1000).toFixed(3) + ' s'));
        li.appendChild(el('span', 'text', line[1]));
        list.appendChild(li);
      });
      details.appendChild(list);
      box.appendChild(details);
    }
    panel.hidden = !any;
  }

  // Hands visible from the current position: every one in the all-cards view, only the
  // finished ones in a seat's view (what that seat knew).
  function knownHands() {
    if (V.seat === 'all') return M.hands.filter(function (H) { return H.end; });
    var out = [];
    for (var i = 0; i < M.hands.length && i <= V.h; i++) {
      var H = M.hands[i];
      if (!H.end) continue;
      if (i < V.h || V.k === H.moves.length) out.push(H);
    }
    return out;
  }

  function renderHands() {
    var table = clear($('hands'));
    var head = el('tr');
    head.appendChild(el('th', '', 'Hand'));
    head.appendChild(el('th', '', 'Winner'));
    for (var s = 0; s < SEATS; s++) head.appendChild(el('th', '', 'Seat ' + s + ' ' + M.seats[s]));
    var thead = el('thead');
    thead.appendChild(head);
    table.appendChild(thead);
    var body = el('tbody');
    knownHands().forEach(function (H) {
      var row = el('tr');
      if (H.index === V.h) row.className = 'current';
      var cell = el('td');
      var go = el('button', 'link', String(H.deal.hand));
      go.setAttribute('aria-label', 'Go to the end of hand ' + H.deal.hand);
      go.addEventListener('click', function () { stop(); goTo(H.index, H.moves.length); });
      cell.appendChild(go);
      row.appendChild(cell);
      row.appendChild(el('td', '', validSeat(H.end.winner) ? 'seat ' + H.end.winner : '?'));
      for (var s = 0; s < SEATS; s++) {
        var score = H.end.scores[s];
        var td = el('td', 'num');
        td.appendChild(el('span', 'score', (score > 0 ? '+' : '') + score));
        td.appendChild(el('span', 'muted small', ' ' + (H.end.cards[s] || []).length + ' left \u00b7 ' + H.end.totals[s]));
        row.appendChild(td);
      }
      body.appendChild(row);
    });
    table.appendChild(body);
    if (!body.childNodes.length) {
      var empty = el('tr');
      var td = el('td', 'muted', 'No hand has ended yet.');
      td.colSpan = 6;
      empty.appendChild(td);
      body.appendChild(empty);
    }
  }

  function renderChart() {
    var box = clear($('chart'));
    var hands = knownHands();
    if (!hands.length) { box.appendChild(el('p', 'muted', 'No hand has ended yet.')); return; }
    var W = 600, Hh = 230, L = 44, R = 12, T = 12, B = 28;
    var series = [];
    var lo = 0, hi = 0;
    for (var s = 0; s < SEATS; s++) {
      var pts = [[0, 0]];
      hands.forEach(function (H, i) {
        var v = H.end.totals[s];
        pts.push([i + 1, v]);
        lo = Math.min(lo, v); hi = Math.max(hi, v);
      });
      series.push(pts);
    }
    if (hi === lo) hi = lo + 1;
    var n = hands.length;
    function x(i) { return L + (W - L - R) * i / n; }
    function y(v) { return T + (Hh - T - B) * (hi - v) / (hi - lo); }
    var root = svg('svg', { viewBox: '0 0 ' + W + ' ' + Hh, role: 'img', class: 'chart-svg' });
    root.appendChild(svg('title')).textContent = 'Totals after each hand';
    [lo, 0, hi].forEach(function (v, i, all) {
      if (i === 1 && (v === lo || v === hi)) return;
      root.appendChild(svg('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid-line' }));
      var t = svg('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' });
      t.textContent = String(v);
      root.appendChild(t);
    });
    var step = Math.max(1, Math.ceil(n / 10));
    for (var i = 0; i <= n; i += step) {
      var t = svg('text', { x: x(i), y: Hh - 8, 'text-anchor': 'middle', class: 'axis' });
      t.textContent = String(i);
      root.appendChild(t);
    }
    var current = hands.indexOf(M.hands[V.h]);
    if (current >= 0) {
      root.appendChild(svg('line', { x1: x(current + 1), x2: x(current + 1), y1: T, y2: Hh - B, class: 'marker' }));
    }
    series.forEach(function (pts, s) {
      var d = pts.map(function (p, i) { return (i ? 'L' : 'M') + x(p[0]).toFixed(1) + ' ' + y(p[1]).toFixed(1); }).join(' ');
      root.appendChild(svg('path', { d: d, fill: 'none', stroke: COLORS[s], 'stroke-width': 2.2, 'stroke-dasharray': DASHES[s] }));
      if (n <= 60) pts.forEach(function (p) { root.appendChild(marker(s, x(p[0]), y(p[1]))); });
    });
    box.appendChild(root);
    var legend = el('ul', 'legend');
    for (var s2 = 0; s2 < SEATS; s2++) {
      var li = el('li');
      var key = svg('svg', { viewBox: '0 0 36 12', width: 36, height: 12 });
      key.appendChild(svg('line', { x1: 0, x2: 36, y1: 6, y2: 6, stroke: COLORS[s2], 'stroke-width': 2.2, 'stroke-dasharray': DASHES[s2] }));
      key.appendChild(marker(s2, 18, 6));
      li.appendChild(key);
      li.appendChild(el('span', '', seatName(s2) + ': ' + series[s2][series[s2].length - 1][1]));
      legend.appendChild(li);
    }
    box.appendChild(legend);
  }

  // One shape per seat, so the series differ without colour too.
  function marker(s, cx, cy) {
    var r = 3.6;
    if (s === 0) return svg('circle', { cx: cx, cy: cy, r: r, fill: COLORS[s] });
    if (s === 1) return svg('rect', { x: cx - r, y: cy - r, width: 2 * r, height: 2 * r, fill: COLORS[s] });
    if (s === 2) return svg('path', { d: 'M' + cx + ' ' + (cy - r - 1) + 'L' + (cx + r + 1) + ' ' + (cy + r) + 'L' + (cx - r - 1) + ' ' + (cy + r) + 'Z', fill: COLORS[s] });
    return svg('path', { d: 'M' + cx + ' ' + (cy - r - 1) + 'L' + (cx + r + 1) + ' ' + cy + 'L' + cx + ' ' + (cy + r + 1) + 'L' + (cx - r - 1) + ' ' + cy + 'Z', fill: COLORS[s] });
  }

  function atEnd() {
    return M.hands.length && V.h === M.hands.length - 1 && V.k === M.hands[V.h].moves.length;
  }

  function renderStandings() {
    var box = clear($('standings'));
    if (!M.end) { box.appendChild(el('p', 'muted', data.live ? 'The match is being played.' : 'The log ends before the match ended.')); return; }
    if (V.seat !== 'all' && !atEnd()) { box.appendChild(el('p', 'muted', 'Known at the end of the match.')); return; }
    box.appendChild(el('p', '', (M.end.status === 'finished' ? 'Finished' : 'Ended: ' + M.end.status) + (M.end.reason ? ': ' + M.end.reason : '')));
    var table = el('table', 'grid');
    var head = el('tr');
    ['Place', 'Seat', 'Total', 'Hands won'].forEach(function (h) { head.appendChild(el('th', '', h)); });
    table.appendChild(head);
    (M.end.standings || []).forEach(function (st) {
      var row = el('tr');
      row.appendChild(el('td', 'num', String(st.place)));
      row.appendChild(el('td', '', (st.seats || []).map(seatName).join(' + ')));
      row.appendChild(el('td', 'num', String(st.total)));
      row.appendChild(el('td', 'num', String(st.won)));
      table.appendChild(row);
    });
    box.appendChild(table);
    if ((M.end.strikes || []).some(function (x) { return x; })) {
      box.appendChild(el('p', 'muted', 'Strikes: ' + M.end.strikes.join(', ')));
    }
  }

  function fact(list, name, value, cls) {
    list.appendChild(el('dt', '', name));
    var dd = el('dd', cls || '', value);
    list.appendChild(dd);
    return dd;
  }

  function renderProof() {
    var list = clear($('proof'));
    var m = M.match;
    fact(list, 'Seed commitment', m ? m.commitment : '', 'mono');
    if (M.end && (V.seat === 'all' || atEnd())) {
      fact(list, 'Revealed seed', M.end.seed || '(none)', 'mono');
      if (M.end.seed_ok === true) fact(list, 'Seed check', '\u2714 SHA-256 of the seed equals the commitment', 'good');
      else if (M.end.seed_ok === false) fact(list, 'Seed check', '\u2718 SHA-256 of the seed does NOT equal the commitment', 'bad');
    } else {
      fact(list, 'Revealed seed', M.end ? 'known at the end of the match' : 'revealed when the match ends');
    }
    if (M.trailer) {
      fact(list, 'Signature', M.trailer.algorithm + ' by key ' + M.trailer.key + ' over ' + M.trailer.lines +
        ' lines (check it with referee verify --public-key)', 'mono');
    }
    var v = data.verdict;
    if (v) {
      var text = v.ok
        ? '\u2714 accepts this log: ' + v.lines + ' lines, ' + v.hands + ' hands (hash chain, deals against the seed, every verdict, the scores)'
        : '\u2718 rejects this log: ' + (v.line ? 'line ' + v.line + ': ' : '') + v.problem;
      fact(list, 'referee verify', text, v.ok ? 'good' : 'bad');
      fact(list, 'Checked', 'by ' + v.checker + ' when this page was written (' + v.at + ')', 'muted');
    } else if (data.live) {
      fact(list, 'referee verify', 'the full log is checked when the match ends');
    }
  }

  function renderSettings() {
    var list = clear($('settings'));
    var m = M.match;
    if (!m) { fact(list, 'Match', 'the log has no match_created event'); return; }
    fact(list, 'Match', m.id, 'mono');
    fact(list, 'Referee', 'version ' + m.software + ', protocol ' + m.protocol);
    function table(name, obj) {
      var keys = Object.keys(obj || {});
      if (!keys.length) return;
      list.appendChild(el('dt', 'section', name));
      list.appendChild(el('dd', 'section'));
      keys.forEach(function (k) { fact(list, k.replace(/_/g, ' '), String(obj[k])); });
    }
    table('Rules', m.rules);
    table('Clocks (ms)', m.time);
    table('Fault policy', m.faults);
    table('Drills', m.drills);
  }

  function renderHeader() {
    var m = M.match;
    var id = m ? m.id : '';
    document.title = clean('Match ' + id + (m ? ' (' + m.profile + ')' : ''));
    $('title').textContent = clean(m ? 'Match ' + id : 'Match');
    var sub = m ? [m.profile, M.seats.join(' \u00b7 ')].join(' \u2014 ') : '';
    $('subtitle').textContent = clean(sub);
    var select = $('perspective');
    while (select.options.length > 1) select.remove(1);
    for (var s = 0; s < SEATS; s++) {
      var opt = el('option', '', 'Seat ' + s + ': ' + M.seats[s]);
      opt.value = String(s);
      select.appendChild(opt);
    }
    select.value = String(V.seat);
    // A live match shows public information only: every hand face down, no choice to make.
    $('perspective-label').hidden = !!data.live;
    var v = data.verdict;
    var banner = $('banner');
    if (v && !v.ok) {
      banner.hidden = false;
      banner.className = 'banner bad';
      clear(banner);
      banner.appendChild(el('strong', '', 'This log does not verify. '));
      banner.appendChild(el('span', '', (v.line ? 'First bad line: ' + v.line + '. ' : '') + v.problem + '. '));
      banner.appendChild(el('span', '', 'The page shows what the log says, which is not proof of what the referee decided.'));
      if (v.line) {
        var go = el('button', 'link', 'Go to line ' + v.line);
        go.addEventListener('click', function () { stop(); goToLine(v.line); });
        banner.appendChild(go);
      }
    }
  }

