"""A small Hub-compatible HTTP server on 127.0.0.1 for publishing tests (no mocks of our code).

It implements just the routes `huggingface_hub`, `transformers` and `datasets` use to publish
and download: whoami, validate-yaml, repo create, branch create, preupload (every file
"regular"), commit (NDJSON, base64 contents), repo info, tree, paths-info and resolve. Every
request body is recorded so tests can check that a token never travels in uploaded bytes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

TOKEN = "hf_fake_token_0123456789abcdefXYZ"


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob " + str(len(data)).encode() + b"\0" + data).hexdigest()


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    branches: dict[str, dict[str, bytes]] = field(default_factory=lambda: {"main": {}})
    commits: dict[str, list[str]] = field(default_factory=lambda: {"main": ["0" * 40]})


class HubState:
    def __init__(self) -> None:
        self.repos: dict[tuple[str, str], Repo] = {}
        self.bodies: list[bytes] = []
        self.requests: list[str] = []
        self.lock = threading.Lock()


REPO = r"(?P<type>models|datasets|spaces)/(?P<repo>[^/]+/[^/]+)"


class Handler(BaseHTTPRequestHandler):
    state: HubState

    def log_message(self, *args: Any) -> None:
        pass

    # -- helpers -----------------------------------------------------------------------
    def _send(
        self,
        code: int,
        body: Any = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> None:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        self.send_response(code)
        self.send_header(
            "Content-Type", "application/json" if raw is None else "application/octet-stream"
        )
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(n) if n else b""
        with self.state.lock:
            self.state.bodies.append(data)
        return data

    def _repo_url(self, rtype: str, repo_id: str) -> str:
        prefix = "" if rtype == "model" else f"{rtype}s/"
        return f"http://{self.headers['Host']}/{prefix}{repo_id}"

    def _authorized(self) -> bool:
        return self.headers.get("Authorization") == f"Bearer {TOKEN}"

    def _repo(self, rtype: str, repo_id: str) -> Repo | None:
        return self.state.repos.get((rtype.rstrip("s"), repo_id))

    @staticmethod
    def _branch(repo: Repo, rev: str) -> str | None:
        """A branch name, or the branch whose history holds commit `rev`."""
        if rev in repo.branches:
            return rev
        return next((b for b, c in repo.commits.items() if rev in c), None)

    # -- routes --------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._route("GET")

    def do_HEAD(self) -> None:
        self._route("HEAD")

    def do_POST(self) -> None:
        self._route("POST")

    def _route(self, method: str) -> None:
        url = urlparse(self.path)
        path = unquote(url.path)
        query = parse_qs(url.query)
        self.state.requests.append(f"{method} {path}")
        body = self._body() if method == "POST" else b""
        if path == "/api/whoami-v2":
            if not self._authorized():
                return self._send(401, {"error": "Invalid credentials"})
            return self._send(
                200,
                {
                    "name": "tester",
                    "type": "user",
                    "orgs": [],
                    "auth": {
                        "type": "access_token",
                        "accessToken": {"displayName": "t", "role": "write"},
                    },
                },
            )
        if path == "/api/validate-yaml":
            return self._send(200, {"errors": [], "warnings": []})
        if path == "/api/repos/create" and method == "POST":
            if not self._authorized():
                return self._send(401, {"error": "Invalid credentials"})
            p = json.loads(body)
            rtype = p.get("type") or "model"
            repo_id = (
                f"{p['organization']}/{p['name']}"
                if p.get("organization")
                else f"tester/{p['name']}"
            )
            key = (rtype, repo_id)
            if key in self.state.repos:
                return self._send(
                    409,
                    {
                        "error": "You already created this repo",
                        "url": self._repo_url(rtype, repo_id),
                    },
                )
            self.state.repos[key] = Repo(rtype, repo_id, p.get("visibility") == "private")
            return self._send(200, {"url": self._repo_url(rtype, repo_id), "name": repo_id})
        m = re.fullmatch(rf"/api/{REPO}/branch/(?P<branch>.+)", path)
        if m and method == "POST":
            repo = self._repo(m["type"], m["repo"])
            if repo is None:
                return self._send(
                    404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
                )
            if m["branch"] in repo.branches:
                return self._send(409, {"error": "Reference already exists"})
            repo.branches[m["branch"]] = dict(repo.branches["main"])
            repo.commits[m["branch"]] = list(repo.commits["main"])
            return self._send(200, {})
        m = re.fullmatch(rf"/api/{REPO}/preupload/(?P<rev>.+)", path)
        if m:
            repo = self._repo(m["type"], m["repo"])
            if repo is None:
                return self._send(
                    404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
                )
            files = repo.branches.get(m["rev"], {})
            out = [
                {
                    "path": f["path"],
                    "uploadMode": "regular",
                    "shouldIgnore": False,
                    "oid": git_blob_sha1(files[f["path"]]) if f["path"] in files else None,
                }
                for f in json.loads(body)["files"]
            ]
            return self._send(
                200, {"files": out, "commitOid": repo.commits.get(m["rev"], ["0" * 40])[-1]}
            )
        m = re.fullmatch(rf"/api/{REPO}/commit/(?P<rev>.+)", path)
        if m and method == "POST":
            if not self._authorized():
                return self._send(401, {"error": "Invalid credentials"})
            repo = self._repo(m["type"], m["repo"])
            if repo is None or m["rev"] not in repo.branches:
                return self._send(
                    404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
                )
            files = repo.branches[m["rev"]]
            for line in body.splitlines():
                item = json.loads(line)
                if item["key"] == "file":
                    v = item["value"]
                    files[v["path"]] = (
                        base64.b64decode(v["content"])
                        if v.get("encoding") == "base64"
                        else v["content"].encode()
                    )
                elif item["key"] == "deletedFile":
                    files.pop(item["value"]["path"], None)
                elif item["key"] == "lfsFile":
                    return self._send(400, {"error": "this test hub accepts regular uploads only"})
            oid = hashlib.sha1(
                json.dumps(sorted((k, git_blob_sha1(v)) for k, v in files.items())).encode()
                + str(len(repo.commits[m["rev"]])).encode()
            ).hexdigest()
            repo.commits[m["rev"]].append(oid)
            return self._send(
                200,
                {
                    "commitUrl": f"{self._repo_url(repo.repo_type, repo.repo_id)}/commit/{oid}",
                    "commitOid": oid,
                },
            )
        m = re.fullmatch(rf"/api/{REPO}(?:/revision/(?P<rev>[^/]+))?", path)
        if m and method == "GET":
            repo = self._repo(m["type"], m["repo"])
            rev = self._branch(repo, m["rev"] or "main") if repo else None
            if repo is None or rev is None:
                return self._send(
                    404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
                )
            files = repo.branches[rev]
            return self._send(
                200,
                {
                    "id": repo.repo_id,
                    "sha": repo.commits[rev][-1],
                    "private": repo.private,
                    "siblings": [{"rfilename": f} for f in sorted(files)],
                    "tags": [],
                },
            )
        m = re.fullmatch(rf"/api/{REPO}/tree/(?P<rev>[^/]+)(?:/(?P<sub>.*))?", path)
        if m and method == "GET":
            repo = self._repo(m["type"], m["repo"])
            rev = self._branch(repo, m["rev"]) if repo else None
            if repo is None or rev is None:
                return self._send(
                    404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
                )
            return self._send(
                200,
                self._tree(
                    repo.branches[rev],
                    (m["sub"] or "").strip("/"),
                    query.get("recursive", ["false"])[0] in ("true", "1", "True"),
                ),
            )
        m = re.fullmatch(rf"/api/{REPO}/paths-info/(?P<rev>[^/]+)", path)
        if m and method == "POST":
            repo = self._repo(m["type"], m["repo"])
            if repo is None:
                return self._send(
                    404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
                )
            files = repo.branches.get(self._branch(repo, m["rev"]) or "", {})
            wanted = (
                parse_qs(body.decode()).get("paths", [])
                if body and not body.startswith(b"{")
                else json.loads(body or b"{}").get("paths", [])
            )
            out = []
            for p in wanted:
                p = p.strip("/")
                if p in files:
                    out.append(
                        {
                            "type": "file",
                            "path": p,
                            "oid": git_blob_sha1(files[p]),
                            "size": len(files[p]),
                        }
                    )
                elif any(f.startswith(p + "/") for f in files) or p == "":
                    out.append({"type": "directory", "path": p, "oid": "0" * 40, "size": 0})
            return self._send(200, out)
        m = re.fullmatch(
            r"/(?:(?P<type>datasets|spaces)/)?(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<file>.+)",
            path,
        )
        if m:
            repo = self.state.repos.get(((m["type"] or "models").rstrip("s"), m["repo"]))
            if repo is None:
                return self._send(
                    404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
                )
            rev = self._branch(repo, m["rev"]) or ""
            files = repo.branches.get(rev, {})
            if m["file"] not in files:
                return self._send(
                    404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"}
                )
            data = files[m["file"]]
            etag = git_blob_sha1(data)
            return self._send(
                200, raw=data, headers={"X-Repo-Commit": repo.commits[rev][-1], "ETag": f'"{etag}"'}
            )
        return self._send(404, {"error": f"no route {method} {path}"})

    @staticmethod
    def _tree(files: dict[str, bytes], sub: str, recursive: bool) -> list[dict[str, Any]]:
        prefix = f"{sub}/" if sub else ""
        out: dict[str, dict[str, Any]] = {}
        for f, data in sorted(files.items()):
            if not f.startswith(prefix):
                continue
            rest = f[len(prefix) :]
            if "/" in rest and not recursive:
                d = prefix + rest.split("/")[0]
                out[d] = {"type": "directory", "path": d, "oid": "0" * 40, "size": 0}
                continue
            if recursive:
                parts = rest.split("/")[:-1]
                for i in range(len(parts)):
                    d = prefix + "/".join(parts[: i + 1])
                    out[d] = {"type": "directory", "path": d, "oid": "0" * 40, "size": 0}
            out[f] = {"type": "file", "path": f, "oid": git_blob_sha1(data), "size": len(data)}
        return list(out.values())


class HubServer:
    """Context manager: `with HubServer() as hub: hub.url, hub.state`."""

    def __init__(self) -> None:
        self.state = HubState()
        handler = type("BoundHandler", (Handler,), {"state": self.state})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> HubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
