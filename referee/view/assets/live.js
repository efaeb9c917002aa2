// A table kept up to date from its server's event stream: the match list of `referee
// serve --http` (matches.js) and the ladder's queue (ladder.js), each inlined after this
// file in one script. followTable opens the stream the table's body names (data-events),
// hands each message of `event` to draw, counts the updates in the body's data-updates,
// and on a refusal (too many watchers) closes the stream and says why in the status line.
function followTable(bodyId, statusId, event, draw) {
  'use strict';
  var body = document.getElementById(bodyId);
  document.documentElement.setAttribute('data-ready', '1');
  if (!body || !window.EventSource) return;
  var status = document.getElementById(statusId);
  var source = new EventSource(body.getAttribute('data-events'));
  source.addEventListener(event, function (e) {
    var doc;
    try { doc = JSON.parse(e.data); } catch (err) { return; }  // broken: wait for the next
    draw(body, status, doc);
    body.setAttribute('data-updates', String(Number(body.getAttribute('data-updates') || 0) + 1));
  });
  source.addEventListener('refused', function (e) {
    source.close();
    if (status) status.textContent = String(e.data);
  });
}
