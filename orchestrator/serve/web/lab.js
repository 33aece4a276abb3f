// ftlab serve's live page: draws the fabric (the SVG orchestrator/graph
// renders), then follows the server's snapshots (server-sent events from
// /api/events, about one a second) and colours every link by its state
// and load, and lists the links' queues and drops.
"use strict";

(function () {
  const tokenMeta = document.querySelector('meta[name="ftlab-token"]');
  const token = tokenMeta ? tokenMeta.content : "";
  const control = document.body.dataset.control === "true";
  const intervalMs = Number(document.body.dataset.intervalMs) || 1000;
  const svgNS = "http://www.w3.org/2000/svg";
  const lines = new Map(); // link name -> <line>
  let last = null; // newest snapshot
  let lastAt = 0;

  const el = (id) => document.getElementById(id);

  function rate(bps) {
    const units = [[1e12, "Tbit/s"], [1e9, "Gbit/s"], [1e6, "Mbit/s"], [1e3, "Kbit/s"]];
    for (const [m, u] of units) {
      if (bps >= m) return (bps / m).toPrecision(3) + " " + u;
    }
    return Math.round(bps) + " bit/s";
  }

  function size(b) {
    const units = [[1 << 30, "GiB"], [1 << 20, "MiB"], [1 << 10, "KiB"]];
    for (const [m, u] of units) {
      if (b >= m) return (b / m).toPrecision(3) + " " + u;
    }
    return b + " B";
  }

  // Load colours: idle grey, then green, yellow, orange, purple at line rate.
  function loadColour(u) {
    if (u <= 0.001) return "#8a96a3";
    if (u < 0.5) return "#2ca02c";
    if (u < 0.9) return "#e6b800";
    if (u < 0.99) return "#ff7f0e";
    return "#9467bd";
  }

  async function loadGraph() {
    const r = await fetch("/api/graph.svg");
    if (!r.ok) throw new Error("graph: " + r.status + " " + (await r.text()));
    el("graph").innerHTML = await r.text();
    document.querySelectorAll("#graph line.link").forEach((l) => {
      lines.set(l.dataset.link, l);
      if (control) l.addEventListener("click", () => toggle(l.dataset.a, l.dataset.b, l.dataset.link));
    });
  }

  function mark(line, on) {
    const svg = line.ownerSVGElement;
    let m = svg.querySelector('text.failed-mark[data-link="' + CSS.escape(line.dataset.link) + '"]');
    if (!on) {
      if (m) m.remove();
      return;
    }
    if (m) return;
    m = document.createElementNS(svgNS, "text");
    m.setAttribute("class", "failed-mark");
    m.dataset.link = line.dataset.link;
    m.setAttribute("x", (Number(line.getAttribute("x1")) + Number(line.getAttribute("x2"))) / 2);
    m.setAttribute("y", (Number(line.getAttribute("y1")) + Number(line.getAttribute("y2"))) / 2);
    m.setAttribute("text-anchor", "middle");
    m.setAttribute("dominant-baseline", "middle");
    m.setAttribute("font-size", "14");
    m.setAttribute("font-weight", "bold");
    m.setAttribute("fill", "#d62728");
    m.textContent = "✕";
    line.parentNode.appendChild(m);
  }

  function dirText(from, to, d) {
    let s = from + " → " + to + ": " + rate(d.load_bps);
    if (d.rate_bps) s += " of " + rate(d.rate_bps) + " (" + Math.round(100 * d.utilization) + "%)";
    s += ", queue " + size(d.queue_bytes) + " (max " + size(d.max_queue_bytes) + ")";
    if (d.drops) s += ", drops: queue " + d.drop_queue + ", corrupt " + d.drop_corrupt + ", link down " + d.drop_link_down;
    return s;
  }

  function drawLink(l) {
    const line = lines.get(l.name);
    if (!line) return;
    const u = Math.max(l.up.utilization, l.down.utilization);
    let col = loadColour(u), width = 1.2 + 4 * Math.min(u, 1);
    if (l.state === "failed") { col = "#d62728"; width = 2.2; }
    if (l.state === "down") { col = "#ff7f0e"; width = 1.8; }
    line.setAttribute("class", "link " + l.state);
    line.dataset.state = l.state;
    line.dataset.utilization = u.toFixed(3);
    line.setAttribute("stroke", col);
    line.setAttribute("stroke-width", width.toFixed(2));
    const title = line.querySelector("title");
    if (title) title.textContent = l.name + " (" + l.state + ")\n" + dirText(l.a, l.b, l.up) + "\n" + dirText(l.b, l.a, l.down);
    mark(line, l.state === "failed");
  }

  function cell(row, text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    row.appendChild(td);
  }

  function busy(l, impaired) {
    const active = (d) => d.load_bps > 0 || d.queue_bytes > 0 || d.drops > 0;
    return l.state !== "up" || active(l.up) || active(l.down) || impaired.has(l.name);
  }

  function drawTable(snap) {
    const tbody = document.querySelector("#links tbody");
    const only = el("busy-only").checked;
    const impaired = new Set(snap.impairments.map((i) => i.link));
    const rows = snap.links.filter((l) => !only || busy(l, impaired));
    const order = { failed: 0, down: 1, up: 2 };
    rows.sort((x, y) => order[x.state] - order[y.state] ||
      Math.max(y.up.utilization, y.down.utilization) - Math.max(x.up.utilization, x.down.utilization));
    tbody.replaceChildren();
    for (const l of rows) {
      const tr = document.createElement("tr");
      tr.className = l.state;
      tr.dataset.link = l.name;
      cell(tr, l.name);
      cell(tr, l.state + (impaired.has(l.name) ? ", impaired" : ""), "state");
      for (const d of [l.up, l.down]) {
        cell(tr, rate(d.load_bps) + (d.rate_bps ? " (" + Math.round(100 * d.utilization) + "%)" : ""));
        cell(tr, size(d.queue_bytes));
        cell(tr, size(d.max_queue_bytes));
        cell(tr, d.drop_queue + "/" + d.drop_corrupt + "/" + d.drop_link_down);
      }
      if (control) {
        const td = document.createElement("td");
        const b = document.createElement("button");
        b.textContent = l.state === "failed" ? "repair" : "fail";
        b.addEventListener("click", () => toggle(l.a, l.b, l.name));
        td.appendChild(b);
        tr.appendChild(td);
      }
      tbody.appendChild(tr);
    }
  }

  function drawSummary(snap) {
    const up = snap.links.filter((l) => l.state === "up").length;
    let s = snap.links.length + " links, " + up + " up";
    if (snap.failed.length) s += ", failed: " + snap.failed.join(", ");
    const down = snap.links.filter((l) => l.state === "down").map((l) => l.name);
    if (down.length) s += ", interface down: " + down.join(", ");
    if (!snap.counters) s += " (no counters: the lab does not run the eBPF data plane)";
    el("summary").textContent = s;
    const ul = el("impairments");
    ul.replaceChildren();
    for (const im of snap.impairments) {
      const li = document.createElement("li");
      let t = im.link + " " + im.direction + " (" + im.from + " → " + im.to + "):";
      if (im.drop) t += " drop " + (100 * im.drop).toPrecision(3) + "%";
      if (im.rate_bps) t += " rate " + rate(im.rate_bps);
      li.textContent = t;
      ul.appendChild(li);
    }
    if (!snap.impairments.length) ul.innerHTML = "<li>none</li>";
  }

  function update(snap) {
    last = snap;
    lastAt = Date.now();
    document.body.dataset.seq = snap.seq;
    const err = el("error");
    err.hidden = !snap.error;
    err.textContent = snap.error || "";
    snap.links.forEach(drawLink);
    drawTable(snap);
    drawSummary(snap);
    el("status").textContent = "updated " + new Date(snap.time).toLocaleTimeString();
    el("status").classList.remove("stale");
  }

  async function toggle(a, b, name) {
    if (!control || !last) return;
    const l = last.links.find((x) => x.name === name);
    const up = l && l.state === "failed";
    if (!window.confirm((up ? "Repair" : "Fail") + " link " + name + "?")) return;
    const r = await fetch("/api/link", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Ftlab-Token": token },
      body: JSON.stringify({ a: a, b: b, up: up }),
    });
    if (!r.ok) {
      const e = await r.json().catch(() => ({ error: r.statusText }));
      el("error").hidden = false;
      el("error").textContent = "link " + name + ": " + e.error;
    }
  }

  function connect() {
    const es = new EventSource("/api/events");
    es.onmessage = (e) => update(JSON.parse(e.data));
    es.onerror = () => {
      el("status").textContent = "connection lost, retrying…";
      el("status").classList.add("stale");
    };
    // A stream that stops without an error (a suspended laptop) is stale.
    setInterval(() => {
      if (lastAt && Date.now() - lastAt > 5 * intervalMs) el("status").classList.add("stale");
    }, intervalMs);
  }

  el("busy-only").addEventListener("change", () => last && drawTable(last));
  loadGraph().then(connect, (e) => {
    el("error").hidden = false;
    el("error").textContent = String(e);
    connect();
  });
})();
