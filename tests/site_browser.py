#!/usr/bin/env python3
"""site_browser.py SITE SHOTS [--links-only] - the results site in a real
browser: each page kind (the landing page, a problem's, EMD's gap page, an
implementation's, a peer's, the regression view) opened in headless
Chromium through Selenium: every chart drawn with the series its data names,
no console error, a deep link to a configuration opening it, the pages
readable with JavaScript off (their tables); every link of every page
resolving (a file, and the anchor in it), checked without a browser too
(--links-only). Screenshots go to SHOTS. Prints "ok: ..." or "FAIL: ..."
lines and "N passed, N failed"."""
import html.parser
import os
import sys
import urllib.parse

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print("ok: " + what)
    else:
        failed += 1
        print("FAIL: " + what)


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links, self.canvases, self.rows, self.in_body = set(), [], 0, 0, 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag in ("script", "link") and (a.get("src") or a.get("href")):
            self.links.append(a.get("src") or a.get("href"))
        self.canvases += tag == "canvas"
        self.in_body += tag == "tbody"
        self.rows += tag == "tr" and self.in_body > 0  # a table's rows, not its heads

    def handle_endtag(self, tag):
        self.in_body -= tag == "tbody"


def parse(path):
    p = Page()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    return p


def links(site):
    """Every link of every page: a file of the site, and its anchor there."""
    pages = {n: parse(os.path.join(site, n)) for n in os.listdir(site) if n.endswith(".html")}
    bad = []
    for name, p in pages.items():
        for href in p.links:
            url = urllib.parse.urlparse(href)
            if url.scheme or url.netloc:
                bad.append("%s: %s leaves the site" % (name, href))
                continue
            target = urllib.parse.unquote(url.path) or name
            path = os.path.normpath(os.path.join(site, target))
            if not os.path.exists(path):
                bad.append("%s: %s: no such file" % (name, href))
            elif url.fragment and target.endswith(".html"):
                there = pages.get(target) or parse(path)
                if url.fragment not in there.ids:
                    bad.append("%s: %s: no such anchor" % (name, href))
    check(not bad, "every link of %d pages resolves%s" % (len(pages), "".join("\n  " + b for b in bad[:10])))
    return pages


def browser(site, shots, pages):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    def driver(js=True):
        opts = webdriver.ChromeOptions()
        for b in ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"):
            if os.path.exists(b):
                opts.binary_location = b
                break
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=1400,1000",
                    "--allow-file-access-from-files"):
            opts.add_argument(arg)
        if not js:
            opts.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        path = next((d for d in ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver")
                     if os.path.exists(d)), None)
        return webdriver.Chrome(service=Service(path) if path else Service(), options=opts)

    def url(name, frag=""):
        return "file://" + os.path.abspath(os.path.join(site, name)) + (("#" + frag) if frag else "")

    kinds = [("landing", "index.html"),
             ("problem", next(n for n in sorted(pages) if n.startswith("problem-") and "emd" not in n)),
             ("emd", next((n for n in sorted(pages) if n.startswith("problem-emd")), None)),
             ("implementation", next(n for n in sorted(pages) if n.startswith("impl-"))),
             ("peer", next((n for n in sorted(pages) if n.startswith("peer-")), None)),
             ("regression view", "compare.html")]
    d = driver()
    try:
        for kind, name in kinds:
            if name is None:
                check(False, "a page of kind %s exists" % kind)
                continue
            d.get(url(name))
            charts = d.execute_script(
                "return Array.from(document.querySelectorAll('canvas[data-series]')).map(c => {"
                " const ch = window.Chart && Chart.getChart(c);"
                " return [c.id, +c.dataset.series, ch ? ch.data.datasets.length : -1,"
                " ch ? ch.data.datasets.reduce((n, s) => n + s.data.length, 0) : 0, c.width]; })")
            expected = pages[name].canvases
            check(len(charts) == expected and all(s == n and s > 0 and pts > 0 and w > 0
                                                  for _, s, n, pts, w in charts),
                  "%s page %s: %d chart%s drawn, each with the series its data names %s"
                  % (kind, name, len(charts), "" if len(charts) == 1 else "s",
                     [(c[0], c[1], c[2]) for c in charts]))
            logs = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
            check(not logs, "%s page: no console error%s" % (kind, "".join(
                "\n  " + e.get("message", "") for e in logs[:5])))
            check(d.execute_script("return document.querySelectorAll('tbody tr').length") > 0,
                  "%s page: its data as a table" % kind)
            d.save_screenshot(os.path.join(shots, "%s.png" % kind.replace(" ", "-")))
        # a deep link to a configuration opens it: the target is there and in view
        problem = kinds[1][1]
        anchor = next(i for i in sorted(pages[problem].ids) if "--" in i)
        d.get(url(problem, anchor))
        got = d.execute_script(
            "const t = document.querySelector(':target');"
            "return t ? [t.id, t.getBoundingClientRect().top, window.innerHeight] : null")
        check(got is not None and got[0] == anchor and 0 <= got[1] < got[2],
              "a deep link to configuration %s opens it in view (%s)" % (anchor, got))
        d.save_screenshot(os.path.join(shots, "deep-link.png"))
        # two clicks from the landing page: its problem link, then the configuration
        d.get(url("index.html"))
        first = d.execute_script("const a = document.querySelector('a[href^=\"problem-\"]'); return a && a.href")
        check(bool(first) and "#" in first, "the landing page's headline links straight to a configuration")
        d.set_window_size(1400, 2000)
        d.get(url("index.html"))
        d.save_screenshot(os.path.join(shots, "landing-full.png"))
    finally:
        d.quit()
    d = driver(js=False)
    try:
        d.get(url(kinds[1][1]))
        rows = len(d.find_elements("css selector", "tbody tr"))
        check(rows > 0 and rows == pages[kinds[1][1]].rows and
              not d.find_elements("css selector", "canvas[data-series].chartjs-render-monitor"),
              "with JavaScript off the problem page is its tables (%d rows)" % rows)
    finally:
        d.quit()


def main(argv):
    site, shots = argv[1], argv[2]
    os.makedirs(shots, exist_ok=True)
    pages = links(site)
    if "--links-only" not in argv:
        browser(site, shots, pages)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
