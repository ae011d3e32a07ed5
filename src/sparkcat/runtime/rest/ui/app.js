// The status page: polls Kafka's REST API for statuses and /ui/metrics.json for numbers.
// Plain script, no build step. Requests go to the page's own origin with its credentials,
// so a worker behind authentication asks the browser for them as for the page itself.
"use strict";

const POLL_MS = 1000;
const POINTS = 60;
const history = {};  // connector -> {rate: [], lag: []}

async function call(method, path) {
  const response = await fetch(path, { method, credentials: "same-origin",
                                       headers: { Accept: "application/json" } });
  const text = await response.text();
  const body = text ? JSON.parse(text) : null;
  if (!response.ok) {
    throw new Error((body && body.message) || `${response.status} ${response.statusText}`);
  }
  return body;
}

function element(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) {
    if (child !== null && child !== undefined) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
  return node;
}

function sparkline(values, kind) {
  const svgNS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(svgNS, "svg");
  svg.setAttribute("viewBox", `0 0 ${POINTS - 1} 24`);
  svg.setAttribute("preserveAspectRatio", "none");
  const top = Math.max(1, ...values);
  const step = (POINTS - 1) / Math.max(1, values.length - 1);  // the history fills the width
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(23 - (v / top) * 22).toFixed(1)}`);
  const line = document.createElementNS(svgNS, "polyline");
  line.setAttribute("points", points.join(" "));
  svg.append(line);
  const last = values.length ? values[values.length - 1] : null;
  const shown = last === null ? "–" : formatNumber(last);
  return element("div", { class: `spark ${kind}` }, svg,
                 element("span", { class: `num ${kind}-value`, "data-value": String(last) }, shown));
}

function formatNumber(value) {
  if (value >= 1e6) return (value / 1e6).toFixed(1) + "M";
  if (value >= 1e3) return (value / 1e3).toFixed(1) + "k";
  return value >= 10 || value === 0 ? value.toFixed(0) : value.toFixed(1);
}

function remember(name, metrics) {
  const entry = history[name] || (history[name] = { rate: [], lag: [] });
  entry.rate.push(metrics ? metrics.rate || 0 : 0);
  if (metrics && metrics.lag !== null && metrics.lag !== undefined) entry.lag.push(metrics.lag);
  for (const key of ["rate", "lag"]) {
    if (entry[key].length > POINTS) entry[key].splice(0, entry[key].length - POINTS);
  }
  return entry;
}

function lastTrace(status) {
  if (status.connector.trace) return status.connector.trace;
  const failed = (status.tasks || []).find((t) => t.trace);
  return failed ? failed.trace : null;
}

function actions(name, state) {
  const act = async (action, method, path) => {
    try {
      await call(method, path);
      show(`${action} ${name}: done`);
    } catch (error) {
      show(`${action} ${name}: ${error.message}`);
    }
    refresh();
  };
  const base = `/connectors/${encodeURIComponent(name)}`;
  const button = (label, action, method, path) =>
    element("button", { "data-action": action, onclick: () => act(label, method, path) }, label);
  return element("td", { class: "actions" },
    state === "PAUSED" || state === "STOPPED"
      ? button("Resume", "resume", "PUT", `${base}/resume`)
      : button("Pause", "pause", "PUT", `${base}/pause`),
    button("Restart", "restart", "POST", `${base}/restart?includeTasks=true&onlyFailed=false`),
    button("Stop", "stop", "PUT", `${base}/stop`));
}

function row(name, entry, metrics, traceOpen) {
  const status = entry.status;
  const state = status.connector.state;
  const tasks = element("td", { class: "tasks" }, ...(status.tasks || []).map((t) =>
    element("span", { class: `state ${t.state}`, title: t.worker_id }, `${t.id}: ${t.state}`)));
  const trace = lastTrace(status);
  const seen = remember(name, metrics);
  return element("tr", { "data-connector": name },
    element("td", null, element("strong", null, name),
      trace ? element("details", { class: "trace", open: traceOpen },
                      element("summary", null, "last error"),
                      element("pre", null, trace)) : null),
    element("td", null, status.type || (entry.info && entry.info.type) || ""),
    element("td", null, element("span", { class: `state ${state}`, "data-state": state }, state)),
    tasks,
    element("td", null, status.connector.worker_id || ""),
    element("td", { class: "rate" }, sparkline(seen.rate, "rate")),
    element("td", { class: "lag" }, seen.lag.length ? sparkline(seen.lag, "lag") : "–"),
    actions(name, state));
}

let shownAt = 0;

function show(text) {
  document.getElementById("message").textContent = text;
  shownAt = Date.now();
}

function expireMessage() {
  // Action results stay for a few seconds; "Loading…" and errors go with the next answer.
  if (Date.now() - shownAt > 4000) document.getElementById("message").textContent = "";
}

async function refresh() {
  try {
    const [connectors, metrics] = await Promise.all([
      call("GET", "/connectors?expand=status&expand=info"),
      call("GET", "/ui/metrics.json"),
    ]);
    const body = document.querySelector("#connectors tbody");
    const names = Object.keys(connectors).sort();
    // Rows are rebuilt on every refresh: an error trace the user opened stays open.
    const open = new Set([...body.querySelectorAll("details.trace[open]")]
      .map((details) => details.closest("tr").dataset.connector));
    body.replaceChildren(...names.map((name) =>
      row(name, connectors[name], metrics.connectors[name], open.has(name))));
    document.getElementById("connectors").hidden = names.length === 0;
    expireMessage();
    if (!names.length) show("No connectors.");
    const worker = metrics.worker["connect-worker-metrics"] || {};
    document.getElementById("worker").textContent =
      `${worker["connector-count"] || 0} connectors, ${worker["task-count"] || 0} tasks`;
    document.getElementById("updated").textContent =
      "updated " + new Date().toLocaleTimeString();
    document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes || 0) + 1);
  } catch (error) {
    show(`Cannot reach the worker: ${error.message}`);
  }
}

refresh();
setInterval(refresh, POLL_MS);
