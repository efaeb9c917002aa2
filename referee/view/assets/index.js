// A folder's index (referee view DIR): filter the list of matches by bot, by a pair of
// bots (a head-to-head cell chooses both) or by problems. The address keeps the filter
// (#bot=a&with=b&show=problems). Without this script every match is listed.
(function () {
  'use strict';

  var form = document.getElementById('filters');
  var list = document.getElementById('matches');
  document.documentElement.setAttribute('data-ready', '1');
  if (!form || !list) return;
  var bot = document.getElementById('f-bot');
  var other = document.getElementById('f-with');
  var show = document.getElementById('f-status');
  var count = document.getElementById('f-count');
  var rows = Array.prototype.slice.call(list.querySelectorAll('.match'));
  var bots = rows.map(function (row) {
    try {
      var names = JSON.parse(row.getAttribute('data-bots') || '[]');
      return Array.isArray(names) ? names.map(String) : [];
    } catch (e) {
      return [];
    }
  });
  form.hidden = false;

  function apply() {
    var a = bot.value, b = other.value, problems = show.value === 'problems';
    var shown = 0;
    rows.forEach(function (row, i) {
      var ok = (!a || bots[i].indexOf(a) >= 0) && (!b || bots[i].indexOf(b) >= 0) &&
        (!problems || row.getAttribute('data-problem') === '1');
      row.hidden = !ok;
      if (ok) shown++;
    });
    count.textContent = shown === rows.length ? rows.length + ' matches'
      : shown + ' of ' + rows.length + ' matches';
    list.setAttribute('data-shown', String(shown));
    var parts = [];
    if (a) parts.push('bot=' + encodeURIComponent(a));
    if (b) parts.push('with=' + encodeURIComponent(b));
    if (problems) parts.push('show=problems');
    var hash = parts.length ? '#' + parts.join('&') : '';
    if (location.hash !== hash) {
      try { history.replaceState(null, '', hash || location.pathname + location.search); } catch (e) { /* a sandboxed frame */ }
    }
  }

  function choose(select, value) {
    for (var i = 0; i < select.options.length; i++) {
      if (select.options[i].value === value) { select.value = value; return; }
    }
    select.value = '';
  }

  function fromHash() {
    var q = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (part) {
      var kv = part.split('=');
      if (kv.length === 2) {
        try { q[kv[0]] = decodeURIComponent(kv[1]); } catch (e) { /* not ours */ }
      }
    });
    choose(bot, q.bot || '');
    choose(other, q['with'] || '');
    choose(show, q.show || '');
    apply();
  }

  [bot, other, show].forEach(function (s) { s.addEventListener('change', apply); });
  document.getElementById('f-clear').addEventListener('click', function () {
    bot.value = ''; other.value = ''; show.value = ''; apply();
  });
  Array.prototype.forEach.call(document.querySelectorAll('.matrix td.pair'), function (cell) {
    var button = cell.querySelector('button');
    if (!button) return;
    button.addEventListener('click', function () {
      choose(bot, cell.getAttribute('data-a') || '');
      choose(other, cell.getAttribute('data-b') || '');
      show.value = '';
      apply();
      form.scrollIntoView({ block: 'start' });
    });
  });
  window.addEventListener('hashchange', fromHash);
  fromHash();
})();
