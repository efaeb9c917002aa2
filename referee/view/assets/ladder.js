// The ladder's queue page (referee ladder serve): the table follows the queue from the
// server's stream (/queue/events, through live.js's followTable), without reloading.
// Every string is set with textContent; links are built from the match id and the
// store's name rule.
(function () {
  'use strict';

  var empty = document.getElementById('queue-empty');
  var NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;

  function text(parent, tag, value, cls) {
    var el = document.createElement(tag);
    if (cls) el.className = cls;
    el.textContent = value;
    parent.appendChild(el);
    return el;
  }

  function seat(parent, label) {
    var m = /^([^/]+)\/([^#]+)#(\d+)$/.exec(String(label));
    if (!m || !NAME.test(m[1]) || !NAME.test(m[2])) { text(parent, 'span', String(label)); return; }
    var a = document.createElement('a');
    a.href = '/bots/' + m[1] + '/' + m[2];
    a.appendChild(document.createTextNode(m[1] + '/'));
    text(a, 'strong', m[2]);
    parent.appendChild(a);
    text(parent, 'span', '#' + m[3], 'muted');
  }

  function row(m) {
    var tr = document.createElement('tr');
    tr.setAttribute('data-id', String(m.match_id));
    text(tr, 'td', String(m.position), 'num');
    text(tr, 'td', String(m.match_id), 'mono');
    var st = String(m.state).replace(/[^a-z]/g, '');
    text(text(tr, 'td', ''), 'span', st, 'status s-' + st);
    text(tr, 'td', String(m.purpose));
    var seats = text(tr, 'td', '', 'seats');
    (m.seats || []).forEach(function (s, i) {
      if (i) seats.appendChild(document.createTextNode(' \u00b7 '));
      seat(seats, s.label);
    });
    var last = text(tr, 'td', '');
    if (m.live) {
      var a = text(last, 'a', 'watch live', 'watch');
      a.href = '/matches/' + encodeURIComponent(String(m.match_id));
    } else {
      text(last, 'span', st === 'scheduled' ? 'waiting' : 'starting', 'muted');
    }
    return tr;
  }

  function draw(body, status, doc) {
    var matches = Array.isArray(doc.matches) ? doc.matches : [];
    var rows = document.createDocumentFragment();
    matches.forEach(function (m) { rows.appendChild(row(m)); });
    body.textContent = '';
    body.appendChild(rows);
    status.textContent = (Number(doc.running) || 0) + ' playing, ' +
      (Number(doc.queued) || 0) + ' waiting.';
    empty.hidden = matches.length > 0;
  }

  followTable('queue-rows', 'queue-status', 'queue', draw);
})();
