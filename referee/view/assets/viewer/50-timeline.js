  // -- the timeline: where the things worth finding happened ----------------------------

  var MARKS = {
    hand: 'hand end', crash: 'crash', timeout: 'timeout', reject: 'rejection', disconnect: 'disconnect',
    raised: 'raise'
  };

  function timelineMarks() {
    var marks = [];
    function add(p, kind, text) { marks.push({ p: p, kind: kind, text: text }); }
    M.hands.forEach(function (H, h) {
      var base = toPos(h, 0);
      for (var j = 0; j <= H.moves.length; j++) {
        var next = H.moves[j];
        (H.notes[j] || []).forEach(function (op) {
          if (op.t === 'seat' && !op.on && validSeat(op.seat)) {
            if (op.gone) add(base + j, 'crash', seatName(op.seat) + ' crashed: ' + op.cause);
            else add(base + j, 'disconnect', seatName(op.seat) + ' disconnected: ' + op.cause);
          } else if (op.t === 'reject' && validSeat(op.seat) && sees(op.seat)) {
            var at = isAttempt(op, next) ? base + j + 1 : base + j;
            add(at, 'reject', seatName(op.seat) + ': ' + (op.reason || '').replace(/_/g, ' '));
          }
        });
        if (next && raisedAt(next)) {
          add(base + j + 1, 'raised', seatName(next.seat) + ": the bot's code raised at hand " + H.deal.hand +
            ', move ' + (j + 1) + ': ' + raisedAt(next));
        }
        if (next && next.cause === 'timeout') {
          add(base + j + 1, 'timeout', seatName(next.seat) + ' timed out (hand ' + H.deal.hand + ', move ' + (j + 1) + ')');
        }
      }
      if (H.end) add(base + H.moves.length, 'hand', 'Hand ' + H.deal.hand + ' ends: ' + seatName(H.end.winner) + ' wins');
    });
    return marks;
  }

  function renderTimeline() {
    var line = clear($('timeline'));
    var key = clear($('timeline-key'));
    var last = Math.max(positionCount() - 1, 1);
    var groups = {};
    var counts = {};
    timelineMarks().forEach(function (mk) {
      var id = mk.kind + '@' + mk.p;
      counts[mk.kind] = (counts[mk.kind] || 0) + 1;
      if (groups[id]) { groups[id].text.push(mk.text); return; }
      groups[id] = { p: mk.p, kind: mk.kind, text: [mk.text] };
    });
    var order = ['hand', 'reject', 'disconnect', 'timeout', 'raised', 'crash'];
    Object.keys(groups).map(function (id) { return groups[id]; }).sort(function (a, b) {
      return order.indexOf(a.kind) - order.indexOf(b.kind) || a.p - b.p;
    }).forEach(function (g) {
      var b = el('button', 'mark');
      b.setAttribute('data-kind', g.kind);
      b.setAttribute('data-pos', String(g.p));
      b.style.left = (100 * g.p / last).toFixed(3) + '%';
      var words = g.text.join('; ');
      b.setAttribute('title', words);
      b.setAttribute('aria-label', MARKS[g.kind] + ': ' + words);
      b.addEventListener('click', function () { stop(); goPos(g.p); });
      line.appendChild(b);
    });
    order.slice().reverse().forEach(function (kind) {
      if (!counts[kind]) return;
      var li = el('li', 'key');
      li.setAttribute('data-kind', kind);
      var swatch = el('span', 'swatch');
      swatch.setAttribute('data-kind', kind);
      li.appendChild(swatch);
      li.appendChild(el('span', '', MARKS[kind] + (counts[kind] === 1 ? '' : 's') + ' ' + counts[kind]));
      key.appendChild(li);
    });
    key.hidden = !key.childNodes.length;
  }

  function markTimeline(p) {
    var marks = $('timeline').querySelectorAll('.mark');
    for (var i = 0; i < marks.length; i++) {
      marks[i].classList.toggle('here', Number(marks[i].getAttribute('data-pos')) === p);
    }
  }

