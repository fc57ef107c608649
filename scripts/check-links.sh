#!/usr/bin/env bash
# Every relative link of the repository's Markdown files resolves inside the repository: each
# [text](target) and <img src="target"> whose target is not a URL or a pure #anchor must name an
# existing file or folder, reached from the linking file's folder without leaving the repository
# (a clone has no ../shared). Anchors (#section) are not checked. Exit 1 with one line per broken link.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)
python3 - "$root" <<'PY'
import os, re, subprocess, sys
root = sys.argv[1]
files = subprocess.run(["git", "ls-files", "*.md"], capture_output=True, text=True,
                       check=True).stdout.split()
link = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|<img[^>]*\ssrc=\"([^\"]+)\"")
fence = re.compile(r"^\s*(```|~~~)")
broken = 0
checked = 0
for path in files:
    in_code = False
    with open(os.path.join(root, path), encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if fence.match(line):
                in_code = not in_code
                continue
            if in_code:
                continue
            for m in link.finditer(re.sub(r"`[^`]*`", "", line)):
                target = m.group(1) or m.group(2)
                if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
                    continue
                target = target.split("#", 1)[0]
                resolved = os.path.realpath(os.path.join(root, os.path.dirname(path), target))
                checked += 1
                if not (resolved == root or resolved.startswith(root + os.sep)):
                    print(f"{path}:{number}: {target} leaves the repository")
                    broken += 1
                elif not os.path.exists(resolved):
                    print(f"{path}:{number}: {target} does not exist")
                    broken += 1
print(f"check-links: {checked} relative links in {len(files)} Markdown files, {broken} broken")
sys.exit(1 if broken else 0)
PY
