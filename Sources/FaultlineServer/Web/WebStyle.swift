// The one stylesheet, served as /ui/static/app.css (the CSP allows styles only from 'self',
// so no page carries inline style).
enum WebStyle {
    static let css = """
        :root { --fg:#1d2330; --muted:#6b7385; --line:#e3e6ec; --bg:#f7f8fa; --accent:#3355cc; --bad:#c8322d; --warn:#d48a00; --good:#2c8a4b; }
        * { box-sizing: border-box; }
        body { margin:0; font:14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--fg); background:var(--bg); }
        header { background:#1d2330; }
        nav { display:flex; gap:18px; align-items:center; padding:10px 24px; }
        nav a { color:#d5dbea; text-decoration:none; }
        nav a.brand { color:#fff; font-weight:700; margin-right:12px; }
        nav .who { margin-left:auto; color:#9aa3b8; }
        nav form.logout button { background:none; border:1px solid #56607a; color:#d5dbea; border-radius:4px; padding:2px 8px; cursor:pointer; }
        main { max-width:1200px; margin:0 auto; padding:20px 24px 60px; }
        h1 { font-size:20px; margin:4px 0 12px; word-break:break-word; }
        h2 { font-size:15px; margin:26px 0 8px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); }
        h2 code { text-transform:none; letter-spacing:0; }
        a { color:var(--accent); }
        .muted { color:var(--muted); }
        table { border-collapse:collapse; width:100%; background:#fff; border:1px solid var(--line); }
        th, td { text-align:left; padding:7px 10px; border-bottom:1px solid var(--line); vertical-align:top; }
        th { font-weight:600; font-size:12px; color:var(--muted); background:#fbfbfd; }
        td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
        .title a { font-weight:600; text-decoration:none; word-break:break-word; }
        .culprit { color:var(--muted); font-size:12px; word-break:break-all; }
        .tag { display:inline-block; background:#eef1f7; border-radius:3px; padding:0 6px; margin:1px 2px 1px 0; font-size:12px; }
        .tag.sym { background:#e2f3e8; color:var(--good); }
        .tag.unsym { background:#fdeeee; color:var(--bad); }
        .tag.resolved { background:#e6ecfb; }
        svg.spark rect { fill:#7d93d9; } svg.spark rect.zero { fill:#d9dde6; }
        svg.rates rect.good { fill:var(--good); } svg.rates rect.warn { fill:var(--warn); } svg.rates rect.bad { fill:var(--bad); }
        svg.share rect { fill:var(--accent, #4a6fa5); } table.breakdown { display:inline-table; margin-right:2em; vertical-align:top; }
        form.filters { display:flex; flex-wrap:wrap; gap:8px; margin:0 0 12px; align-items:center; }
        input, select, button { font:inherit; padding:4px 8px; border:1px solid #c9ceda; border-radius:4px; background:#fff; }
        button { cursor:pointer; }
        button.primary { background:var(--accent); border-color:var(--accent); color:#fff; }
        .login { max-width:380px; margin:60px auto; background:#fff; border:1px solid var(--line); padding:24px; border-radius:6px; }
        .login label { display:block; margin:10px 0 4px; }
        .login input { width:100%; }
        .error { color:var(--bad); }
        .actions { display:flex; gap:8px; align-items:center; margin:8px 0 16px; flex-wrap:wrap; }
        .actions form { display:flex; gap:6px; }
        .stack { background:#fff; border:1px solid var(--line); font:12.5px/1.5 ui-monospace, "DejaVu Sans Mono", monospace; }
        .frame { padding:6px 10px; border-bottom:1px solid var(--line); }
        .frame.system { color:#8a90a0; }
        .frame.inapp { border-left:3px solid var(--accent); background:#fafbff; }
        .frame.inapp .fn { font-weight:700; color:var(--fg); }
        .frame.own { opacity:.5; }
        pre.source { margin:.3em 0 0 1.5em; font-size:.85em; white-space:pre-wrap; }
        pre.source .cur { font-weight:700; background:#fff6d6; display:block; }
        pre.source .ctx { color:var(--muted); display:block; }
        .frame .loc { color:var(--muted); margin-left:8px; }
        .frame .trust { color:var(--muted); font-size:11px; margin-left:8px; }
        .frame .inl { margin:2px 0 0 22px; padding-left:8px; border-left:2px dashed #c5cbe0; }
        .frame .inl .badge { font-size:11px; color:var(--muted); margin-right:6px; }
        .frame details summary { cursor:pointer; color:var(--muted); font-size:11px; }
        .frame.crashed { background:#fff6f5; }
        ol.timeline { list-style:none; padding:0; margin:0; background:#fff; border:1px solid var(--line); }
        ol.timeline li { padding:5px 10px; border-bottom:1px solid var(--line); display:grid; grid-template-columns:170px 80px 120px 1fr; gap:8px; }
        .lvl-error, .lvl-fatal { color:var(--bad); } .lvl-warning, .lvl-warn { color:var(--warn); }
        dl.kv { display:grid; grid-template-columns:max-content 1fr; gap:4px 16px; background:#fff; border:1px solid var(--line); padding:10px; margin:0; }
        dl.kv dt { color:var(--muted); } dl.kv dd { margin:0; word-break:break-all; }
        pre { white-space:pre-wrap; word-break:break-all; margin:0; }
        ol.feedback { list-style:none; padding:0; margin:0; } ol.feedback li { background:#fff; border:1px solid var(--line); padding:8px 12px; margin-bottom:8px; }
        ol.feedback blockquote { margin:0 0 4px; white-space:pre-wrap; }
        pre.message { background:#fff; border:1px solid var(--line); padding:10px; }
        details.chained { margin:0 0 10px; } details.chained summary { cursor:pointer; font-weight:600; padding:4px 0; }
        .regs { columns:3; font:12px ui-monospace, monospace; background:#fff; border:1px solid var(--line); padding:10px; }
        .pager { margin:12px 0; display:flex; gap:12px; }
        .progress { width:160px; height:10px; background:#e7eaf0; border-radius:5px; overflow:hidden; display:inline-block; vertical-align:middle; }
        .progress span { display:block; height:100%; background:var(--accent); }
        .p0 { width:0 } .p10 { width:10% } .p20 { width:20% } .p30 { width:30% } .p40 { width:40% } .p50 { width:50% }
        .p60 { width:60% } .p70 { width:70% } .p80 { width:80% } .p90 { width:90% } .p100 { width:100% }
        .cards { display:flex; gap:12px; flex-wrap:wrap; }
        .card { background:#fff; border:1px solid var(--line); padding:12px 16px; border-radius:6px; min-width:220px; }
        .card .big { font-size:22px; font-weight:700; }
        table.waterfall td.bar { width:45%; padding:4px 10px; }
        svg.wf { width:100%; height:12px; display:block; background:#f1f3f8; }
        svg.wf rect.ok { fill:#7d93d9; } svg.wf rect.tx { fill:var(--accent); } svg.wf rect.err { fill:var(--bad); }
        table.waterfall .sname { word-break:break-word; }
        table.waterfall tr.tx td:first-child { font-weight:600; }
        ul.occurrences { margin:4px 0 0; padding-left:18px; font-weight:400; }
        ol.timeline.logs li { grid-template-columns:170px 70px 110px 1fr 80px; }
        ol.timeline .crumb-data { grid-column:4; font-family:ui-monospace, monospace; font-size:12px; color:var(--muted); word-break:break-all; }
        ol.timeline.logs .attrs { grid-column:4 / 6; }
        ol.timeline.logs .attrs a { text-decoration:none; color:var(--fg); }
        form.filters input[type=search] { min-width:340px; }
        .notice { background:#e2f3e8; color:var(--good); padding:6px 10px; border-radius:4px; margin:0 0 10px; }
        th.pick, td.pick { width:28px; padding-right:0; }
        .bulk-actions { margin:0 0 8px; }
        .breakdowns { display:flex; flex-wrap:wrap; gap:12px; } .breakdowns table.breakdown { width:auto; min-width:260px; margin:0; }
        .frame details.name > summary { color:inherit; font-size:inherit; }
        .frame details.name .fn-full { display:block; margin:2px 0 0 14px; color:var(--muted); word-break:break-word; }
        table.debug-files td, p.file-head { overflow-wrap:anywhere; }
        table.debug-files td.binary { min-width:180px; } table.debug-files td.binary a.name { font-weight:600; text-decoration:none; }
        table.debug-files .build-id code { font-size:11px; color:var(--muted); word-break:break-all; }
        table.debug-files td.issues { min-width:260px; max-width:360px; } table.debug-files td.backfill { max-width:280px; }

        """
        // Waterfall indentation by depth: classes, since the CSP allows no inline style.
        + (0...TracePage.shownDepth).map { ".sd\($0) { padding-left:\(10 + $0 * 14)px; }" }.joined(separator: "\n")
}
