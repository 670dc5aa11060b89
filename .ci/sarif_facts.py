#!/usr/bin/env python3
"""What scangate must record from SARIF files, computed without the Go reader.

Usage: sarif_facts.py [--planted FILE] LOG.sarif... > facts.json

For each log it applies the mapping of docs/API.md ("Record scans from SARIF") on its own (Python
standard library only) and prints, keyed by file name: the result counts
(results, skipped, recorded, suppressed_in_source, per type), the tools, and
every finding to record (type, name, aliases, rule, path, line, suppressed,
severity, category), sorted, and each run's tool, scan type and category. With --planted (one planted secret value a line) it also checks that
each planted value is recorded, by some log, as sha256: of the value, and
exits 1 if one is not. Secret values are never printed: only their hashes.
"""
import hashlib
import json
import os
import re
import sys
import urllib.parse

SECRET_TOOLS = {"gitleaks", "ggshield", "detect-secrets", "trufflehog"}
ADVISORY = re.compile(
    r"^(CVE-\d{4}-\d{4,}|GHSA(-[23456789cfghjmpqrvwx]{4}){3}|GO-\d{4}-\d{4,}"
    r"|PYSEC-\d{4}-\d+|RUSTSEC-\d{4}-\d{4,}|OSV-\d{4}-\d+)$",
    re.IGNORECASE,
)


def is_advisory(s):
    return isinstance(s, str) and len(s) <= 64 and ADVISORY.match(s) is not None


def strings_of(v):
    if isinstance(v, str):
        return [v]
    if isinstance(v, list) and all(isinstance(e, str) for e in v):
        return v
    return []


def bag(props):
    """(tagged secret, advisory ids) of a property bag: ids in its tags, then
    in its other members in the order of their names."""
    props = props or {}
    tags = strings_of(props.get("tags"))
    secret = any(t.lower() == "secret" for t in tags)
    values = tags + [s for k in sorted(props) if k != "tags" for s in strings_of(props[k])]
    return secret, [s for s in values if is_advisory(s)]


LEVELS = {"error": "high", "warning": "medium", "note": "low", "none": "none"}
DECIMAL = re.compile(r"^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$")


def cvss(props):
    """The security-severity of a property bag, a score from 0 to 10, or None."""
    v = (props or {}).get("security-severity")
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return None
    if isinstance(v, str) and not DECIMAL.match(v):
        return None
    x = float(v)
    return x if 0 <= x <= 10 else None


def severity(secret, res, desc):
    """docs/DECISIONS.md, "One SARIF reader": security-severity (result's, else rule's), else
    high for a secret, else the level (result's, else rule's default, else
    warning)."""
    score = cvss(res.get("properties"))
    if score is None:
        score = cvss((desc or {}).get("properties"))
    if score is not None:
        for floor, name in ((9, "critical"), (7, "high"), (4, "medium")):
            if score >= floor:
                return name
        return "low" if score > 0 else "none"
    if secret:
        return "high"
    level = res.get("level") if res.get("level") in LEVELS else None
    if level is None:
        level = ((desc or {}).get("defaultConfiguration") or {}).get("level")
    return LEVELS.get(level, "medium")


def category(run):
    """docs/DECISIONS.md, "One SARIF reader": automationDetails.id up to its last /, else the
    driver's name lowercased; runs of other characters made one -."""
    def norm(s):
        return re.sub(r"[^A-Za-z0-9._/-]+", "-", s)
    ident = (run.get("automationDetails") or {}).get("id") or ""
    if ident.rfind("/") > 0:
        return norm(ident[:ident.rfind("/")])
    return norm(run["tool"]["driver"].get("name", "").lower()) or "default"


def redacted(v):
    return "REDACTED" in v or v.endswith("...") or v.endswith("\u2026") or "***" in v


def file_path(uri):
    if uri.startswith("/"):
        return urllib.parse.unquote(uri)
    u = urllib.parse.urlparse(uri)
    if u.scheme.lower() == "file":
        return urllib.parse.unquote(u.path or u.netloc)
    return None


def is_absolute(uri):
    return uri.startswith("/") or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]+:", uri) is not None


def tidy(p):
    p = os.path.normpath(p) if p else ""
    return "" if p == "." else p.lstrip("/")


def repo_path(run, art):
    uri = art.get("uri") or ""
    if not uri:
        return ""
    bases = run.get("originalUriBaseIds") or {}
    if not is_absolute(uri):
        base, depth = art.get("uriBaseId"), 0
        while base and depth < 8 and base in bases:
            b = bases[base]
            if not b.get("uri") or is_absolute(b["uri"]):
                break
            uri = b["uri"].rstrip("/") + "/" + uri.lstrip("/")
            base, depth = b.get("uriBaseId"), depth + 1
        return tidy(urllib.parse.unquote(uri))
    p = file_path(uri)
    if p is None:
        return uri
    roots = [b["uri"] for b in bases.values() if b.get("uri") and not b.get("uriBaseId")]
    roots += [i["workingDirectory"]["uri"] for i in run.get("invocations") or []
              if (i.get("workingDirectory") or {}).get("uri")]
    best = ""
    for r in roots:
        r = file_path(r)
        if r is not None:
            r = r.rstrip("/") + "/"
            if p.startswith(r) and len(r) > len(best):
                best = r
    return tidy(p[len(best):]) if best else p


def rule_of(run, res):
    """The result's reportingDescriptor, or None."""
    tool = run["tool"]
    comps = [tool["driver"]] + list(tool.get("extensions") or [])
    ref = res.get("rule") or {}
    tc = (ref.get("toolComponent") or {}).get("index")
    if tc is not None:
        comps = comps[1 + tc:2 + tc]
    index = res.get("ruleIndex", -1)
    if index is None or index < 0:
        index = ref.get("index", -1)
    if index is not None and index >= 0:
        rules = (comps[0].get("rules") or []) if comps else []
        return rules[index] if index < len(rules) else None
    rid = res.get("ruleId") or ref.get("id") or ""
    while rid:
        for c in comps:
            for r in c.get("rules") or []:
                if r.get("id") == rid:
                    return r
        if "/" not in rid:
            break
        rid = rid.rsplit("/", 1)[0]
    return None


def finding(run, res):
    driver = run["tool"]["driver"]
    desc = rule_of(run, res)
    rule = res.get("ruleId") or (res.get("rule") or {}).get("id") or (desc or {}).get("id") or ""
    locs = res.get("locations") or []
    phys = (locs[0].get("physicalLocation") or {}) if locs else {}
    path = repo_path(run, phys.get("artifactLocation") or {})
    region = phys.get("region") or {}
    line = region.get("startLine")
    r_secret, r_adv = bag(res.get("properties"))
    d_secret, d_adv = bag((desc or {}).get("properties"))
    name_of_tool = driver.get("name", "").lower()
    secret = (name_of_tool in SECRET_TOOLS or r_secret or d_secret
              or (name_of_tool == "trivy" and (desc or {}).get("name") == "Secret"))
    f = {"type": "SECRET" if secret else "VULNERABILITY", "rule": rule, "path": path,
         "line": line, "aliases": [], "suppressed": any(
             s.get("status") in (None, "accepted") for s in res.get("suppressions") or []),
         "severity": severity(secret, res, desc)}
    if secret:
        value = ((region.get("snippet") or {}).get("text")
                 or ((phys.get("contextRegion") or {}).get("snippet") or {}).get("text"))
        fp = (res.get("partialFingerprints") or {}).get("secret/v1") or ""
        if value and not redacted(value):
            f["name"] = "sha256:" + hashlib.sha256(value.encode()).hexdigest()
        elif re.fullmatch(r"[0-9a-fA-F]{1,128}", fp):
            f["name"] = "ggshield:" + fp.lower()
        else:
            ident = "%s|%s|%s" % (rule, path, "" if line is None else line)
            f["name"] = "loc:" + hashlib.sha256(ident.encode()).hexdigest()
        return f
    others = list((desc or {}).get("deprecatedIds") or []) + d_adv + r_adv
    name = rule if is_advisory(rule) else next((o for o in others if is_advisory(o)), rule)
    for o in others:
        if o and o.lower() != name.lower() and o.lower() not in [a.lower() for a in f["aliases"]]:
            f["aliases"].append(o)
    f["name"] = name
    return f


def facts(log):
    out = {"results": 0, "skipped": 0, "recorded": 0, "suppressed_in_source": 0,
           "by_type": {}, "tools": [], "findings": []}
    out["runs"] = []
    earlier = set()  # the findings of the runs before, by identity
    ranks = ["none", "low", "medium", "high", "critical"]
    for run in log.get("runs") or []:
        driver = run["tool"]["driver"]
        tool = {"name": driver.get("name"), "version": driver.get("version") or driver.get("semanticVersion") or ""}
        if tool not in out["tools"]:
            out["tools"].append(tool)
        cat = category(run)
        out["runs"].append({"tool": tool["name"], "category": cat,
                            "type": "SECRET" if tool["name"].lower() in SECRET_TOOLS else "VULNERABILITY"})
        seen = {}  # this run's findings by identity: a duplicate merges into the first, the least rule id kept
        for res in run.get("results") or []:
            out["results"] += 1
            if res.get("kind", "fail") != "fail" or res.get("baselineState") == "absent":
                out["skipped"] += 1
                continue
            f = finding(run, res)
            f["category"] = cat
            name = f["name"].upper() if f["type"] == "VULNERABILITY" else f["name"]
            key = (cat, f["type"], name, f["path"], f["line"])
            if key in seen:
                g = seen[key]
                g["rule"] = min(g["rule"], f["rule"])  # whatever order the scanner wrote them in
                g["suppressed"] = g["suppressed"] and f["suppressed"]
                g["severity"] = max(g["severity"], f["severity"], key=ranks.index)
                for a in f["aliases"]:
                    if a.lower() not in [x.lower() for x in g["aliases"]] and a.lower() != g["name"].lower():
                        g["aliases"].append(a)
                continue
            if key in earlier:  # an earlier run of the same category made it
                continue
            seen[key] = f
            out["findings"].append(f)
        earlier.update(seen)
    out["recorded"] = len(out["findings"])
    out["suppressed_in_source"] = sum(f["suppressed"] for f in out["findings"])
    for f in out["findings"]:
        out["by_type"][f["type"]] = out["by_type"].get(f["type"], 0) + 1
    out["findings"].sort(key=lambda f: (f["type"], f["name"], f["path"], f["line"] or 0))
    return out


def main(argv):
    planted = None
    if len(argv) > 1 and argv[0] == "--planted":
        with open(argv[1], encoding="utf-8") as fh:
            planted = [v for v in fh.read().splitlines() if v]
        argv = argv[2:]
    result = {}
    for path in argv:
        with open(path, encoding="utf-8") as fh:
            result[os.path.basename(path)] = facts(json.load(fh))
    if planted is not None:
        names = {f["name"] for r in result.values() for f in r["findings"] if f["type"] == "SECRET"}
        want = ["sha256:" + hashlib.sha256(v.encode()).hexdigest() for v in planted]
        result["planted"] = {"names": want, "missing": [n for n in want if n not in names]}
        if result["planted"]["missing"]:
            print("planted secrets not recorded by any log: %s" % result["planted"]["missing"], file=sys.stderr)
            json.dump(result, sys.stdout, indent=1, sort_keys=True)
            return 1
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
