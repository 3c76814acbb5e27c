// tests/cli/report_inspect.js — appended (in a <script>) to a copy of a
// `qpod report --format html` page by tests/cli/report.bats, which loads it
// in headless Chromium (--dump-dom) and reads the JSON this writes into
// a pre element with the id qpod-inspect: per chart its title, caption, how many data marks
// it draws, and every pair of its text labels whose boxes overlap or that
// leave the picture, as laid out by the browser; and the tables wider
// than the page.
(function () {
	const out = { charts: [], headings: [] };
	for (const h of document.querySelectorAll("h2")) out.headings.push(h.textContent);
	for (const fig of document.querySelectorAll("figure")) {
		const svg = fig.querySelector("svg");
		const c = { title: "", caption: "", marks: 0, overlaps: [], outside: [] };
		const t = svg.querySelector("text");
		c.title = t ? t.textContent : "";
		const cap = fig.querySelector("figcaption");
		c.caption = cap ? cap.textContent : "";
		// data marks: bars (rects with a tooltip), curves of 2+ points, dots
		for (const r of svg.querySelectorAll("rect"))
			if (r.querySelector("title") && r.getBBox().width > 0) c.marks++;
		for (const p of svg.querySelectorAll("polyline:not(.reference)"))
			if (p.getAttribute("points").trim().split(/\s+/).length >= 2) c.marks++;
		const vb = svg.viewBox.baseVal;
		const texts = [...svg.querySelectorAll("text")].map((e) => ({ s: e.textContent, b: e.getBBox() }));
		for (const a of texts)
			if (a.b.x < vb.x - 0.5 || a.b.y < vb.y - 0.5 || a.b.x + a.b.width > vb.x + vb.width + 0.5 ||
			    a.b.y + a.b.height > vb.y + vb.height + 0.5)
				c.outside.push(a.s);
		for (let i = 0; i < texts.length; i++)
			for (let j = i + 1; j < texts.length; j++) {
				const a = texts[i].b, b = texts[j].b;
				const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
				const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
				// closer than 2 px counts: "1000" and "ms" side by side read as "1000ms"
				if (w > -2 && h > 1) c.overlaps.push(texts[i].s + " / " + texts[j].s);
			}
		out.charts.push(c);
	}
	// tables wider than the page (their first header cells, to name them)
	out.wide = [...document.querySelectorAll("table")]
		.filter((t) => t.getBoundingClientRect().right > document.documentElement.clientWidth)
		.map((t) => t.rows[0].textContent.slice(0, 60));
	const pre = document.createElement("pre");
	pre.id = "qpod-inspect";
	pre.textContent = JSON.stringify(out);
	document.body.appendChild(pre);
})();
