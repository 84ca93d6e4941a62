/* zinc chat UI: conversations in localStorage, streaming replies from /v1/chat/completions (SSE),
 * markdown (markdown.js), a collapsible thinking block, stop / regenerate / edit, search,
 * export / import, per-conversation system prompt, sampler settings and a model picker. */
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const STORE = "zinc.conversations", CURRENT = "zinc.current", SETTINGS = "zinc.settings";
  const DEFAULTS = { temperature: 0.8, top_p: 0.95, top_k: 40, min_p: 0.05, max_tokens: 1024, repetition_penalty: 1.0,
    thinking: true, api_key: "" };
  let convs = [], current = null, settings = {}, controller = null, nCtx = null, activeModel = "";

  // -- storage -------------------------------------------------------------------------------------
  function load() {
    try { convs = JSON.parse(localStorage.getItem(STORE) || "[]"); } catch (e) { convs = []; }
    if (!Array.isArray(convs)) convs = [];
    try { settings = Object.assign({}, DEFAULTS, JSON.parse(localStorage.getItem(SETTINGS) || "{}")); } catch (e) { settings = Object.assign({}, DEFAULTS); }
    current = localStorage.getItem(CURRENT);
    if (!convs.find((c) => c.id === current)) current = convs.length ? convs[0].id : null;
  }
  function save() {
    try {
      localStorage.setItem(STORE, JSON.stringify(convs));
      localStorage.setItem(SETTINGS, JSON.stringify(settings));
      if (current) localStorage.setItem(CURRENT, current);
    } catch (e) { showError("Could not save to browser storage: " + e.message); }
  }
  const conv = () => convs.find((c) => c.id === current);
  const uid = () => Date.now().toString(36) + Math.random().toString(36).slice(2, 8);

  function newConversation() {
    const c = { id: uid(), title: "New chat", created: Date.now(), updated: Date.now(), system: "", messages: [] };
    convs.unshift(c);
    current = c.id;
    save();
    renderAll();
    $("input").focus();
    return c;
  }

  // -- rendering -----------------------------------------------------------------------------------
  function renderList() {
    const q = $("search").value.trim().toLowerCase();
    const ul = $("conv-list");
    ul.textContent = "";
    for (const c of convs) {
      if (q && !(c.title.toLowerCase().includes(q) || c.messages.some((m) => (m.content || "").toLowerCase().includes(q)))) continue;
      const li = document.createElement("li");
      li.className = c.id === current ? "active" : "";
      li.dataset.id = c.id;
      const t = document.createElement("span");
      t.className = "title";
      t.textContent = c.title;
      const del = document.createElement("button");
      del.className = "del";
      del.title = "Delete";
      del.textContent = "✕";
      del.onclick = (ev) => { ev.stopPropagation(); if (confirm("Delete this conversation?")) deleteConversation(c.id); };
      li.append(t, del);
      li.onclick = () => { if (controller) return; current = c.id; save(); renderAll(); };
      ul.append(li);
    }
  }

  function deleteConversation(id) {
    convs = convs.filter((c) => c.id !== id);
    if (current === id) current = convs.length ? convs[0].id : null;
    save();
    renderAll();
  }

  function statsText(s) {
    if (!s) return "";
    const parts = [];
    if (s.completion_tokens != null) parts.push(s.completion_tokens + " tokens");
    if (s.tok_s) parts.push(s.tok_s.toFixed(1) + " tok/s");
    if (s.ttft != null) parts.push("first token " + s.ttft.toFixed(2) + " s");
    if (s.cached) parts.push(s.cached + " prompt tokens cached");
    if (s.context != null && nCtx) parts.push("context " + s.context + "/" + nCtx + " (" + Math.round(100 * s.context / nCtx) + "%)");
    if (s.finish && s.finish !== "stop") parts.push(s.finish === "length" ? "cut at max tokens" : s.finish);
    return parts.join(" · ");
  }

  function messageNode(m, idx, c) {
    const div = document.createElement("div");
    div.className = "msg " + m.role + (m.error ? " error-msg" : "");
    div.dataset.index = idx;
    if (m.role === "user") {
      const t = document.createElement("div");
      t.className = "text";
      t.textContent = m.content;
      div.append(t);
    } else {
      if (m.reasoning) {
        const d = document.createElement("details");
        d.className = "thinking";
        d.open = !!m.streaming && !m.content;
        const s = document.createElement("summary");
        s.textContent = m.streaming && !m.content ? "Thinking…" : "Thoughts";
        const b = document.createElement("div");
        b.className = "body";
        b.textContent = m.reasoning;
        d.append(s, b);
        div.append(d);
      }
      const body = document.createElement("div");
      body.className = "md" + (m.streaming ? " cursor" : "");
      body.innerHTML = window.zincMarkdown.render(m.content || "") + (m.tool_calls ? toolCallsHtml(m.tool_calls) : "");
      div.append(body);
      if (m.error) {
        const e = document.createElement("div");
        e.className = "err";
        e.textContent = "⚠ " + m.error;
        div.append(e);
      }
      if (m.stats) {
        const st = document.createElement("div");
        st.className = "stats";
        st.textContent = statsText(m.stats);
        div.append(st);
      }
    }
    if (!m.streaming) div.append(actionsFor(m, idx, c));
    return div;
  }

  function toolCallsHtml(calls) {
    return calls.map((t) => window.zincMarkdown.render("Tool call `" + t.function.name + "`\n```json\n" + t.function.arguments + "\n```")).join("");
  }

  function actionsFor(m, idx, c) {
    const a = document.createElement("div");
    a.className = "actions";
    const btn = (label, fn, cls) => { const b = document.createElement("button"); b.type = "button"; b.textContent = label; b.className = cls; b.onclick = fn; a.append(b); };
    btn("Copy", () => copyText(m.content || ""), "copy-msg");
    if (m.role === "user") btn("Edit", () => editMessage(idx), "edit");
    if (m.role === "assistant" && idx === c.messages.length - 1) btn("Regenerate", regenerate, "regenerate");
    return a;
  }

  function renderMessages() {
    const box = $("messages");
    const c = conv();
    box.textContent = "";
    if (!c || !c.messages.length) {
      const e = document.createElement("div");
      e.className = "empty";
      e.textContent = activeModel ? "Chat with " + activeModel + ". Everything stays on this machine." : "Start a conversation.";
      box.append(e);
      return;
    }
    c.messages.forEach((m, i) => box.append(messageNode(m, i, c)));
    box.scrollTop = box.scrollHeight;
  }

  function updateLast() {
    const c = conv();
    const box = $("messages");
    const idx = c.messages.length - 1;
    const old = box.querySelector('.msg[data-index="' + idx + '"]');
    const stick = box.scrollHeight - box.scrollTop - box.clientHeight < 80;
    const node = messageNode(c.messages[idx], idx, c);
    if (old) {
      const det = old.querySelector("details.thinking"), nd = node.querySelector("details.thinking");
      if (det && nd && det.dataset.touched) { nd.open = det.open; nd.dataset.touched = "1"; }
      old.replaceWith(node);
    } else box.append(node);
    if (stick) box.scrollTop = box.scrollHeight;
  }

  function renderSettings() {
    for (const k of Object.keys(DEFAULTS)) {
      const el = $(k);
      if (!el) continue;
      if (el.type === "checkbox") el.checked = !!settings[k]; else el.value = settings[k];
    }
    const c = conv();
    $("system").value = c ? c.system || "" : "";
  }

  function renderAll() { renderList(); renderMessages(); renderSettings(); }

  // -- talking to the server -------------------------------------------------------------------------
  function headers() {
    const h = { "Content-Type": "application/json" };
    if (settings.api_key) h.Authorization = "Bearer " + settings.api_key;
    return h;
  }

  function showError(text) {
    const e = $("error");
    e.textContent = text || "";
    e.hidden = !text;
  }

  async function errorOf(resp) {
    try { const j = await resp.json(); return (j.error && j.error.message) || JSON.stringify(j); } catch (e) { return "HTTP " + resp.status; }
  }

  function requestBody(c) {
    const msgs = [];
    if (c.system && c.system.trim()) msgs.push({ role: "system", content: c.system });
    for (const m of c.messages) {
      if (m.streaming || (m.role === "assistant" && m.error && !m.content)) continue;
      const out = { role: m.role, content: m.content || "" };
      if (m.tool_calls) out.tool_calls = m.tool_calls;
      msgs.push(out);
    }
    const num = (k) => { const v = Number(settings[k]); return Number.isFinite(v) ? v : DEFAULTS[k]; };
    return { messages: msgs, stream: true, stream_options: { include_usage: true }, temperature: num("temperature"),
      top_p: num("top_p"), top_k: Math.round(num("top_k")), min_p: num("min_p"), max_tokens: Math.max(1, Math.round(num("max_tokens"))),
      repetition_penalty: num("repetition_penalty"), chat_template_kwargs: { enable_thinking: !!settings.thinking } };
  }

  async function generate() {
    const c = conv();
    const reply = { role: "assistant", content: "", reasoning: "", streaming: true };
    const body = requestBody(c);
    c.messages.push(reply);
    renderMessages();
    setBusy(true);
    controller = new AbortController();
    const t0 = performance.now();
    let tFirst = null, usage = null, finish = null;
    try {
      const resp = await fetch("/v1/chat/completions", { method: "POST", headers: headers(), body: JSON.stringify(body), signal: controller.signal });
      if (!resp.ok) throw new Error(await errorOf(resp));
      await readSSE(resp, (chunk) => {
        if (chunk.error) throw new Error(chunk.error.message || "server error");
        if (chunk.usage) usage = chunk.usage;
        for (const ch of chunk.choices || []) {
          const d = ch.delta || {};
          if (d.content) { reply.content += d.content; tFirst = tFirst || performance.now(); }
          if (d.reasoning_content) { reply.reasoning += d.reasoning_content; tFirst = tFirst || performance.now(); }
          if (d.tool_calls) { reply.tool_calls = (reply.tool_calls || []).concat(d.tool_calls.map((t) => ({ id: t.id, type: "function", function: t.function }))); }
          if (ch.finish_reason) finish = ch.finish_reason;
        }
        updateLast();
      });
      showError("");
    } catch (e) {
      if (e.name === "AbortError") finish = "stopped";
      else { reply.error = e.message || String(e); showError("Request failed: " + reply.error); }
    } finally {
      const tEnd = performance.now();
      reply.streaming = false;
      reply.stats = { finish: finish, ttft: tFirst ? (tFirst - t0) / 1000 : null };
      if (usage) {
        reply.stats.completion_tokens = usage.completion_tokens;
        reply.stats.context = usage.prompt_tokens + usage.completion_tokens;
        if (usage.prompt_tokens_details) reply.stats.cached = usage.prompt_tokens_details.cached_tokens || 0;
        if (tFirst && usage.completion_tokens > 1 && tEnd > tFirst) reply.stats.tok_s = (usage.completion_tokens - 1) / ((tEnd - tFirst) / 1000);
      }
      if (c.title === "New chat") c.title = titleOf(c);
      c.updated = Date.now();
      controller = null;
      setBusy(false);
      save();
      renderList();
      updateLast();
    }
  }

  async function readSSE(resp, onChunk) {
    const reader = resp.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let cut;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const ev = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        for (const line of ev.split("\n")) {
          if (!line.startsWith("data:")) continue;
          const data = line.slice(5).trim();
          if (data === "[DONE]") return;
          onChunk(JSON.parse(data));
        }
      }
    }
  }

  function titleOf(c) {
    const first = c.messages.find((m) => m.role === "user");
    const t = (first ? first.content : "New chat").replace(/\s+/g, " ").trim();
    return t.length > 48 ? t.slice(0, 47) + "…" : t || "New chat";
  }

  function setBusy(busy) {
    $("send").hidden = busy;
    $("stop").hidden = !busy;
    $("model").disabled = busy;
  }

  // -- actions -------------------------------------------------------------------------------------
  function send(text) {
    if (controller || !text.trim()) return;
    const c = conv() || newConversation();
    c.messages.push({ role: "user", content: text });
    if (c.title === "New chat") c.title = titleOf(c);
    save();
    renderList();
    generate();
  }

  function regenerate() {
    const c = conv();
    if (controller || !c) return;
    if (c.messages.length && c.messages[c.messages.length - 1].role === "assistant") c.messages.pop();
    generate();
  }

  function editMessage(idx) {
    if (controller) return;
    const c = conv();
    const node = $("messages").querySelector('.msg[data-index="' + idx + '"]');
    const ta = document.createElement("textarea");
    ta.className = "edit-box";
    ta.value = c.messages[idx].content;
    const ok = document.createElement("button"), cancel = document.createElement("button");
    ok.textContent = "Save & send";
    ok.className = "save-edit";
    cancel.textContent = "Cancel";
    ok.onclick = () => { c.messages[idx].content = ta.value; c.messages.length = idx + 1; save(); generate(); };
    cancel.onclick = renderMessages;
    node.textContent = "";
    node.append(ta, ok, cancel);
    ta.focus();
  }

  function copyText(text, btn) {
    const done = () => { if (btn) { btn.textContent = "Copied"; setTimeout(() => (btn.textContent = "Copy"), 1200); } };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, () => fallbackCopy(text, done));
    else fallbackCopy(text, done);
  }
  function fallbackCopy(text, done) {
    const ta = document.createElement("textarea");
    ta.value = text;
    document.body.append(ta);
    ta.select();
    try { document.execCommand("copy"); } catch (e) { /* nothing more to try */ }
    ta.remove();
    done();
  }

  function exportAll() {
    const blob = new Blob([JSON.stringify({ format: "zinc-chat", version: 1, conversations: convs }, null, 1)], { type: "application/json" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = "zinc-conversations-" + new Date().toISOString().slice(0, 10) + ".json";
    document.body.append(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }

  async function importFile(file) {
    try {
      const data = JSON.parse(await file.text());
      const list = Array.isArray(data) ? data : data.conversations;
      if (!Array.isArray(list)) throw new Error("no conversations in this file");
      let n = 0;
      for (const c of list) {
        if (!c || !Array.isArray(c.messages)) continue;
        const clean = { id: String(c.id || uid()), title: String(c.title || "Imported chat"), created: c.created || Date.now(),
          updated: c.updated || Date.now(), system: String(c.system || ""),
          messages: c.messages.filter((m) => m && (m.role === "user" || m.role === "assistant")).map((m) => ({
            role: m.role, content: String(m.content || ""), reasoning: m.reasoning ? String(m.reasoning) : "", stats: m.stats || null })) };
        const at = convs.findIndex((x) => x.id === clean.id);
        if (at >= 0) convs[at] = clean; else convs.push(clean);
        n++;
      }
      convs.sort((a, b) => b.updated - a.updated);
      if (!current && convs.length) current = convs[0].id;
      save();
      renderAll();
      showError(n ? "" : "Nothing to import in that file");
    } catch (e) { showError("Import failed: " + e.message); }
  }

  // -- models --------------------------------------------------------------------------------------
  async function loadModels() {
    try {
      const [mr, hr] = await Promise.all([fetch("/v1/models", { headers: headers() }), fetch("/health")]);
      if (!mr.ok) throw new Error(await errorOf(mr));
      const health = await hr.json();
      nCtx = health.n_ctx;
      const data = (await mr.json()).data;
      const sel = $("model");
      sel.textContent = "";
      for (const m of data.filter((d) => d.installed || d.active)) {
        const o = document.createElement("option");
        o.value = m.id;
        o.textContent = m.id + (m.params ? " · " + m.params : "") + (m.quant ? " " + m.quant : "") + (m.fits === false ? " (too big)" : "");
        o.selected = !!m.active;
        if (m.active) activeModel = m.id;
        sel.append(o);
      }
      $("status").textContent = health.backend + " · " + health.device + " · ctx " + health.n_ctx;
      if (!conv() || !conv().messages.length) renderMessages();
    } catch (e) { showError("Cannot reach the server: " + e.message); $("status").textContent = "offline"; }
  }

  async function activate(id) {
    $("status").textContent = "loading " + id + "…";
    $("model").disabled = true;
    try {
      const r = await fetch("/v1/models/activate", { method: "POST", headers: headers(), body: JSON.stringify({ model: id }) });
      if (!r.ok) throw new Error(await errorOf(r));
      showError("");
    } catch (e) { showError("Could not switch model: " + e.message); }
    $("model").disabled = false;
    loadModels();
  }

  // -- wiring --------------------------------------------------------------------------------------
  function wire() {
    $("composer").onsubmit = (e) => { e.preventDefault(); const t = $("input").value; if (t.trim() && !controller) { $("input").value = ""; send(t); } };
    $("input").onkeydown = (e) => { if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); $("composer").requestSubmit(); } };
    $("stop").onclick = () => { if (controller) controller.abort(); };
    $("new-chat").onclick = () => { if (!controller) newConversation(); };
    $("search").oninput = renderList;
    $("export").onclick = exportAll;
    $("import-file").onchange = (e) => { if (e.target.files[0]) importFile(e.target.files[0]); e.target.value = ""; };
    $("settings-btn").onclick = () => { $("settings").hidden = !$("settings").hidden; };
    $("toggle-side").onclick = () => $("sidebar").classList.toggle("hidden");
    $("model").onchange = (e) => activate(e.target.value);
    for (const k of Object.keys(DEFAULTS)) {
      const el = $(k);
      if (el) el.onchange = () => { settings[k] = el.type === "checkbox" ? el.checked : (el.type === "number" ? Number(el.value) : el.value); save(); if (k === "api_key") loadModels(); };
    }
    $("system").onchange = () => { const c = conv() || newConversation(); c.system = $("system").value; save(); };
    $("messages").addEventListener("click", (e) => {
      const b = e.target.closest(".codeblock .copy");
      if (b) copyText(b.parentElement.querySelector("code").innerText, b);
    });
    $("messages").addEventListener("toggle", (e) => { if (e.target.matches("details.thinking")) e.target.dataset.touched = "1"; }, true);
  }

  load();
  wire();
  renderAll();
  loadModels();
  window.zincChat = { get conversations() { return convs; }, get current() { return current; } };
})();
