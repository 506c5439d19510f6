"""Rewrite old module references in the chapters' markdown cells to the module that defines each name now (issue 21). Run once after the move; idempotent."""
import json, glob, re, sys, importlib, inspect, pathlib
sys.path.insert(0, '.')
NEW = {"_checks": "checks", "theory": "maths.theory", "gaussian": "maths.gaussian", "stats": "stats.inference",
       "fit": "stats.fit", "models": "nn.models", "probe": "nn.probe", "evaluation": "nn.evaluation",
       "pretrained": "nn.pretrained", "quantise": "nn.quantise", "device": "nn.device", "data": "training.data",
       "baselines": "training.baselines", "train": "training.train", "runs": "training.runs",
       "sweep": "training.sweep", "engines": "training.engines", "evidence": "book.evidence",
       "ledger": "book.ledger", "preregistration": "book.preregistration", "findings": "book.findings",
       "plots": "book.plots", "results": "analysis.training_analysis", "realmodels": "analysis.pretrained_analysis",
       "depthcost": "analysis.depthcost", "front": "analysis.front", "recheck": "analysis.recheck",
       "training_claims": "analysis.training_claims", "measure_cli": "cli.measure"}
pkg = pathlib.Path('resdecay_lib')

def home(newmod, name):
    """The module (dotted, under resdecay_lib) that defines ``name`` as seen from ``newmod``."""
    m = importlib.import_module('resdecay_lib.' + newmod)
    obj = getattr(m, name, None)
    if obj is None:
        return None
    if inspect.isfunction(obj) or inspect.isclass(obj):
        return obj.__module__[len('resdecay_lib.'):]
    # a constant: find the module that assigns it at top level
    for p in sorted(pkg.rglob('*.py')):
        if re.search(rf'^{re.escape(name)}\s*(:[^=]*)?=', p.read_text(), re.M):
            return '.'.join(p.with_suffix('').parts[1:])
    return newmod

changes = []
def fix(text):
    def rep(m):
        full, old, name, rest = m.group(1), m.group(2), m.group(3), m.group(4)
        if old not in NEW:
            return m.group(0)
        h = home(NEW[old], name)
        if h is None:
            return m.group(0)
        new = ('resdecay_lib.' + h) if full else h.split('.')[-1]
        out = f'`{new}.{name}{rest}`'
        if out != m.group(0):
            changes.append((m.group(0), out))
        return out
    return re.sub(r'`(resdecay_lib\.)?([a-z_]+)\.([A-Za-z_][A-Za-z0-9_]*)([^`]*)`', rep, text)

for f in ['intro.ipynb'] + sorted(glob.glob('chapters/*.ipynb')):
    raw = open(f).read()
    nb = json.loads(raw)
    touched = False
    for c in nb['cells']:
        if c['cell_type'] != 'markdown':
            continue
        s = ''.join(c['source'])
        t = fix(s)
        if t != s:
            c['source'] = t.splitlines(True)
            touched = True
    if touched:
        open(f, 'w').write(json.dumps(nb, indent=1, ensure_ascii=False) + '\n')
for f in sys.argv[1:]:
    s = open(f).read(); t = fix(s)
    if t != s: open(f, 'w').write(t)
for a, b in sorted(set(changes)):
    print(a, '->', b)
