// The match list of `referee serve --http`, kept up to date from the server's stream of
// the list (/events, through live.js's followTable) row by row, so the page neither
// reloads nor loses its scroll. Every string is set with textContent.
(function () {
  'use strict';

  var empty = document.getElementById('no-match');

  function cell(row, i, cls, text) {
    var td = row.cells[i];
    if (!td) { td = document.createElement('td'); row.appendChild(td); }
    td.className = cls || '';
    if (td.textContent !== text) td.textContent = text;
    return td;
  }

  function fill(row, m) {
    var id = String(m.match_id);
    var first = row.cells[0];
    if (!first) { first = document.createElement('td'); row.appendChild(first); }
    var link = first.querySelector('a');
    if (!link) {
      link = document.createElement('a');
      first.appendChild(link);
      link.href = '/matches/' + encodeURIComponent(id);
      link.textContent = id;
    }
    var st = String(m.status);
    cell(row, 1, 'status s-' + st.replace(/[^a-z]/g, ''), st);
    cell(row, 2, '', String(m.profile || ''));
    cell(row, 3, '', (m.seat_names || []).map(String).join(' \u00b7 '));
    cell(row, 4, 'num', String(m.hands_played || 0));
    cell(row, 5, 'num', (m.totals || []).map(String).join(', '));
  }

  function draw(body, status, doc) {
    var matches = Array.isArray(doc.matches) ? doc.matches : [];
    var rows = {};
    Array.prototype.forEach.call(body.rows, function (r) { rows[r.getAttribute('data-id')] = r; });
    var before = null;
    for (var i = matches.length - 1; i >= 0; i--) {  // the server's order, newest first
      var m = matches[i];
      var id = String(m.match_id);
      var row = rows[id];
      if (!row) {
        row = document.createElement('tr');
        row.setAttribute('data-id', id);
      }
      delete rows[id];
      fill(row, m);
      if (row.nextSibling !== before || row.parentNode !== body) body.insertBefore(row, before);
      before = row;
    }
    Object.keys(rows).forEach(function (id) { rows[id].remove(); });
    var running = Number(doc.running) || 0;
    status.textContent = running + ' running, ' + (matches.length - running) + ' over.';
    empty.hidden = matches.length > 0;
  }

  followTable('live-matches', 'list-status', 'matches', draw);
})();
