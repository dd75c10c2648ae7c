// Live memory events: server-sent events from /api/events/stream, prepended to the table.
(function () {
  var rows = document.getElementById("event-rows");
  var state = document.getElementById("live-state");
  if (!rows || !window.EventSource) { return; }
  var source = new EventSource("/api/events/stream");
  function cell(text) { var td = document.createElement("td"); td.textContent = text; return td; }
  function show(msg) {
    var rec = JSON.parse(msg.data);
    var tr = document.createElement("tr");
    tr.className = "fresh";
    var when = String(rec.ts).slice(0, 19).replace("T", " ");  // ISO 8601 from the API
    tr.appendChild(cell(when));
    tr.appendChild(cell(rec.event));
    tr.appendChild(cell(rec.agent || ""));
    var code = document.createElement("code");
    code.textContent = JSON.stringify(rec.payload);
    var td = document.createElement("td"); td.appendChild(code); tr.appendChild(td);
    rows.insertBefore(tr, rows.firstChild);
    while (rows.children.length > 500) { rows.removeChild(rows.lastChild); }
  }
  ["memory:read", "memory:write", "memory:search", "memory:flush", "memory:compact"].forEach(function (name) {
    source.addEventListener(name, show);
  });
  source.onopen = function () { state.textContent = "live"; };
  source.onerror = function () { state.textContent = "reconnecting…"; };
})();
