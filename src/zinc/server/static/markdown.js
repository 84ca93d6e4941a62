/* A small, safe Markdown renderer for chat replies (written for zinc; no dependencies).
 * Everything is HTML-escaped first; only the constructs below produce tags: fenced code blocks
 * (with a language label, a copy button and light syntax highlighting), inline code, headings,
 * bold, italic, strikethrough, links (http/https/mailto only), bullet and numbered lists,
 * blockquotes, horizontal rules, simple pipe tables and paragraphs. Unclosed fences (while a reply
 * streams) render as an open code block. */
(function (global) {
  "use strict";
  const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

  const KEYWORDS = new Set(("if else elif for while do return function def class import from as with try except " +
    "finally catch throw raise new delete const let var fn pub struct enum impl trait match case switch break " +
    "continue in of is not and or lambda yield async await static public private protected void int float double " +
    "bool char string true false True False None null nil undefined self this super package interface type " +
    "extends implements where loop mut use mod go func defer select chan map range println print echo").split(" "));

  function highlight(code, lang) {
    const src = code;
    const hashComments = /^(py|python|sh|bash|shell|zsh|rb|ruby|yaml|yml|toml|r|perl|make|makefile|dockerfile)$/i.test(lang || "");
    const re = hashComments
      ? /(#[^\n]*)|("""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)/g
      : /(\/\/[^\n]*|\/\*[\s\S]*?\*\/|--[^\n]*(?=\n|$)(?!>))|("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)/g;
    let out = "", last = 0, m;
    const sqlish = /^(sql|lua|haskell|hs)$/i.test(lang || "");
    while ((m = re.exec(src)) !== null) {
      out += esc(src.slice(last, m.index));
      if (m[1] !== undefined && (hashComments || !m[1].startsWith("--") || sqlish)) out += '<span class="hl-c">' + esc(m[1]) + "</span>";
      else if (m[1] !== undefined) out += esc(m[1]);
      else if (m[2] !== undefined) out += '<span class="hl-s">' + esc(m[2]) + "</span>";
      else if (m[3] !== undefined) out += '<span class="hl-n">' + esc(m[3]) + "</span>";
      else if (KEYWORDS.has(m[4])) out += '<span class="hl-k">' + esc(m[4]) + "</span>";
      else if (src[re.lastIndex] === "(") out += '<span class="hl-f">' + esc(m[4]) + "</span>";
      else out += esc(m[4]);
      last = re.lastIndex;
    }
    return out + esc(src.slice(last));
  }

  function safeUrl(u) {
    const t = u.trim();
    return /^(https?:|mailto:)/i.test(t) ? t : null;
  }

  function inline(text) {
    // code spans first, so nothing inside them is formatted
    const parts = text.split(/(`[^`\n]+`)/);
    return parts.map((p, i) => {
      if (i % 2 === 1) return "<code>" + esc(p.slice(1, -1)) + "</code>";
      let s = esc(p);
      s = s.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (all, label, url) => {
        const u = safeUrl(url.replace(/&amp;/g, "&"));
        return u ? '<a href="' + esc(u) + '" target="_blank" rel="noopener noreferrer">' + label + "</a>" : all;
      });
      s = s.replace(/(^|[\s(])(https?:\/\/[^\s<)]+)/g, (all, pre, url) =>
        pre + '<a href="' + url + '" target="_blank" rel="noopener noreferrer">' + url + "</a>");
      s = s.replace(/\*\*([^*\n]+)\*\*/g, "<strong>$1</strong>").replace(/__([^_\n]+)__/g, "<strong>$1</strong>");
      s = s.replace(/(^|[^*])\*([^*\n]+)\*/g, "$1<em>$2</em>").replace(/(^|[\s(])_([^_\n]+)_(?=[\s).,!?]|$)/g, "$1<em>$2</em>");
      s = s.replace(/~~([^~\n]+)~~/g, "<del>$1</del>");
      return s;
    }).join("");
  }

  function codeBlock(code, lang) {
    const label = lang ? esc(lang) : "code";
    return '<div class="codeblock"><span class="lang">' + label + '</span><button class="copy" type="button">Copy</button>' +
      "<pre><code>" + highlight(code, lang) + "</code></pre></div>";
  }

  function table(lines) {
    const row = (l) => l.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());
    const head = row(lines[0]);
    let html = "<table><thead><tr>" + head.map((c) => "<th>" + inline(c) + "</th>").join("") + "</tr></thead><tbody>";
    for (const l of lines.slice(2)) html += "<tr>" + row(l).map((c) => "<td>" + inline(c) + "</td>").join("") + "</tr>";
    return html + "</tbody></table>";
  }

  function render(md) {
    const lines = String(md || "").replace(/\r\n?/g, "\n").split("\n");
    let html = "", para = [], i = 0;
    const flush = () => { if (para.length) { html += "<p>" + inline(para.join("\n")).replace(/\n/g, "<br>") + "</p>"; para = []; } };
    while (i < lines.length) {
      const line = lines[i];
      const fence = line.match(/^\s*(```|~~~)\s*([\w+#.-]*)\s*$/);
      if (fence) {
        flush();
        const body = [];
        i++;
        while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
        i++;
        html += codeBlock(body.join("\n"), fence[2]);
        continue;
      }
      let m;
      if ((m = line.match(/^(#{1,6})\s+(.*)$/))) { flush(); html += "<h" + m[1].length + ">" + inline(m[2]) + "</h" + m[1].length + ">"; i++; continue; }
      if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) { flush(); html += "<hr>"; i++; continue; }
      if (/^\s*\|.*\|\s*$/.test(line) && i + 1 < lines.length && /^\s*\|?[\s:|-]+\|?\s*$/.test(lines[i + 1]) && lines[i + 1].includes("-")) {
        flush();
        const rows = [];
        while (i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i])) rows.push(lines[i++]);
        html += table(rows);
        continue;
      }
      if (/^\s*>/.test(line)) {
        flush();
        const q = [];
        while (i < lines.length && /^\s*>/.test(lines[i])) q.push(lines[i++].replace(/^\s*>\s?/, ""));
        html += "<blockquote>" + render(q.join("\n")) + "</blockquote>";
        continue;
      }
      if ((m = line.match(/^\s*([-*+]|\d+[.)])\s+/))) {
        flush();
        const ordered = /\d/.test(m[1]);
        const items = [];
        while (i < lines.length && (m = lines[i].match(/^\s*([-*+]|\d+[.)])\s+(.*)$/)) && /\d/.test(m[1]) === ordered) {
          let item = m[2];
          i++;
          while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !/^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) item += "\n" + lines[i++].trim();
          items.push(item);
        }
        const tag = ordered ? "ol" : "ul";
        html += "<" + tag + ">" + items.map((t) => "<li>" + inline(t).replace(/\n/g, "<br>") + "</li>").join("") + "</" + tag + ">";
        continue;
      }
      if (!line.trim()) { flush(); i++; continue; }
      para.push(line);
      i++;
    }
    flush();
    return html;
  }

  global.zincMarkdown = { render, highlight, escape: esc };
})(window);
