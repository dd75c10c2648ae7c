// A small API explorer built from /api/openapi.json: one form per operation, sent with fetch.
(function () {
  var box = document.getElementById("ops");
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function operation(path, method, op) {
    var d = el("details", { "class": "op" });
    var s = el("summary");
    s.appendChild(el("span", { "class": "method" }, method.toUpperCase()));
    s.appendChild(el("code", {}, path));
    s.appendChild(document.createTextNode("  " + (op.summary || "")));
    d.appendChild(s);
    var inputs = {};
    (op.parameters || []).forEach(function (p) {
      var l = el("label", {}, p.name + (p.required ? " *" : "") + " (" + p.in + ") ");
      var i = el("input", { size: "30" });
      inputs[p.name] = { param: p, input: i };
      l.appendChild(i); d.appendChild(l); d.appendChild(el("br"));
    });
    var body = null;
    if (op.requestBody) {
      body = el("textarea", { rows: "5", placeholder: "JSON body" });
      d.appendChild(body);
    }
    var go = el("button", {}, "Send");
    var out = el("pre", {});
    go.addEventListener("click", function () {
      var url = path, query = [];
      Object.keys(inputs).forEach(function (name) {
        var v = inputs[name].input.value, p = inputs[name].param;
        if (v === "") { return; }
        if (p.in === "path") { url = url.replace("{" + name + "}", encodeURIComponent(v)); }
        else if (p.in === "query") { query.push(encodeURIComponent(name) + "=" + encodeURIComponent(v)); }
      });
      if (query.length) { url += "?" + query.join("&"); }
      var headers = { "Content-Type": "application/json" };
      var token = document.getElementById("token").value;
      if (token) { headers.Authorization = "Bearer " + token; }
      fetch(url, { method: method.toUpperCase(), headers: headers, body: body && body.value ? body.value : undefined, credentials: "same-origin" })
        .then(function (r) { return r.text().then(function (t) { out.textContent = r.status + "\n" + t; }); })
        .catch(function (e) { out.textContent = String(e); });
    });
    d.appendChild(go); d.appendChild(out);
    return d;
  }
  fetch("/api/openapi.json").then(function (r) { return r.json(); }).then(function (spec) {
    box.textContent = "";
    Object.keys(spec.paths).forEach(function (path) {
      Object.keys(spec.paths[path]).forEach(function (method) {
        box.appendChild(operation(path, method, spec.paths[path][method]));
      });
    });
  });
})();
