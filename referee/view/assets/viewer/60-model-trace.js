  // -- a language model's trace (MATCH.seatN.trace.ndjson beside the log) ----------------

  var TRACE = perSeat(data.traces, function (t, bySeq) {
    return { bySeq: bySeq, file: String(t.file || ''), summary: t.summary || null };
  });

  function traceOf(m) { return linesAt(TRACE, m); }

  function modelText(cls, s) {
    // Line breaks kept (a model writes in lines); every other control character shown.
    var node = el('pre', 'mono ' + cls);
    node.textContent = String(s).split('\n').map(clean).join('\n');
    return node;
  }

  function modelCall(c, last) {
    var d = el('details', 'model-call');
    d.open = last;
    var head = 'Asked the model';
    if (c.parse) head += ': read as ' + c.parse;
    if (c.fault) head += ': ' + c.fault;
    if (c.ms) head += ' (' + (c.ms / 1000).toFixed(2) + ' s' + (c.tokens ? ', ' + c.tokens[0] + ' + ' + c.tokens[1] + ' tokens' : '') + ')';
    d.appendChild(el('summary', '', head));
    if (c.saw) { d.appendChild(el('h4', '', 'It saw')); d.appendChild(modelText('model-saw', c.saw)); }
    if (c.thought) { d.appendChild(el('h4', '', 'Its reasoning')); d.appendChild(modelText('model-thought', c.thought)); }
    d.appendChild(el('h4', '', 'It said'));
    d.appendChild(modelText('model-said', c.said || '(nothing)'));
    return d;
  }

  function modelSummary(sm) {
    // The seat's results clean (hands with no fault of the model's) beside raw.
    var n = function (v) { return typeof v === 'number' && isFinite(v) ? v : 0; };
    return el('p', 'muted small', 'Clean hands ' + n(sm.clean_hands) + '/' + n(sm.hands) + ': total ' +
      n(sm.clean_total) + ' clean, ' + n(sm.raw_total) + ' raw; ' + n(sm.first_try) + '/' + n(sm.turns) +
      ' turns right first time, ' + n(sm.rejections) + ' rejected, ' + n(sm.parse_faults) + ' unreadable, ' +
      n(sm.fallbacks) + ' fallbacks, ' + n(sm.provider_failures) + ' provider failures; tokens ' +
      n(sm.prompt_tokens) + ' in, ' + n(sm.completion_tokens) + ' out' + (n(sm.cost) ? ', est. cost ' + n(sm.cost) : ''));
  }

  function modelBox(lines, seat) {
    var box = el('div', 'model-trace');
    box.appendChild(el('h3', '', 'The model' + (lines[0].model ? ' (' + lines[0].model + ')' : '') + ': what it saw, said and played'));
    var sm = TRACE[seat] && TRACE[seat].summary;
    if (sm && typeof sm === 'object') box.appendChild(modelSummary(sm));
    lines.forEach(function (line, i) {
      var move = line.move && line.move.length ? line.move.join(' ') : 'pass';
      var head = (lines.length > 1 ? 'Move ' + (i + 1) + ' sent: ' : 'Move sent: ') + move;
      if (line.source === 'fallback') head += ' (sent by the seat itself: ' + (line.fault || 'no answer') + ')';
      box.appendChild(el('p', 'chose', head));
      var calls = line.calls || [];
      calls.forEach(function (c, j) { box.appendChild(modelCall(c, j === calls.length - 1)); });
    });
    return box;
  }

