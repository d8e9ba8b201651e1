"""The names `hlm publish` sends to the Hub, checked as the Hub checks them, before anything
is written or uploaded: a typo is an error naming its flag, not a card that the Hub refuses
(or, worse, accepts with a license nobody meant).

    target = PublishTarget.from_flags(repo="me/x", revision="main", endpoint=None, ...)

Repo ids use `huggingface_hub`'s own validator. Revisions follow git's rules for a branch
name. A license is one of the identifiers the Hub's model and dataset cards take (its
documentation's list, with `other` for any other), an endpoint and a repository URL are
http(s) URLs with a host.
"""

from __future__ import annotations

import re
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from zoo.errors import UserError, format_validation_error
from zoo.registry import unknown_name_message

# The license identifiers of the Hub's card metadata (its "Licenses" documentation page)
HUB_LICENSES = [
    "apache-2.0",
    "mit",
    "openrail",
    "bigscience-openrail-m",
    "creativeml-openrail-m",
    "bigscience-bloom-rail-1.0",
    "bigcode-openrail-m",
    "afl-3.0",
    "artistic-2.0",
    "bsl-1.0",
    "bsd",
    "bsd-2-clause",
    "bsd-3-clause",
    "bsd-3-clause-clear",
    "c-uda",
    "cc",
    "cc0-1.0",
    "cc-by-2.0",
    "cc-by-2.5",
    "cc-by-3.0",
    "cc-by-4.0",
    "cc-by-sa-3.0",
    "cc-by-sa-4.0",
    "cc-by-nc-2.0",
    "cc-by-nc-3.0",
    "cc-by-nc-4.0",
    "cc-by-nd-4.0",
    "cc-by-nc-nd-3.0",
    "cc-by-nc-nd-4.0",
    "cc-by-nc-sa-2.0",
    "cc-by-nc-sa-3.0",
    "cc-by-nc-sa-4.0",
    "cdla-sharing-1.0",
    "cdla-permissive-1.0",
    "cdla-permissive-2.0",
    "wtfpl",
    "ecl-2.0",
    "epl-1.0",
    "epl-2.0",
    "etalab-2.0",
    "eupl-1.1",
    "eupl-1.2",
    "agpl-3.0",
    "gfdl",
    "gpl",
    "gpl-2.0",
    "gpl-3.0",
    "lgpl",
    "lgpl-2.1",
    "lgpl-3.0",
    "isc",
    "h-research",
    "intel-research",
    "lppl-1.3c",
    "ms-pl",
    "apple-ascl",
    "apple-amlr",
    "mpl-2.0",
    "odc-by",
    "odbl",
    "openrail++",
    "osl-3.0",
    "postgresql",
    "ofl-1.1",
    "ncsa",
    "unlicense",
    "zlib",
    "pddl",
    "lgpl-lr",
    "deepfloyd-if-license",
    "fair-noncommercial-research-license",
    "llama2",
    "llama3",
    "llama3.1",
    "llama3.2",
    "llama3.3",
    "llama4",
    "gemma",
    "unknown",
    "other",
]

# git check-ref-format's refusals for a branch name
_BAD_REF = re.compile(r"(^[-/.])|(\.\.)|([\x00-\x20\x7f~^:?*\[\\])|(@\{)|(//)|([/.]$)|(\.lock$)")

FLAGS = {
    "repo": "--repo",
    "revision": "--revision",
    "license": "--license",
    "endpoint": "--endpoint",
    "repository_url": "--repository-url",
}


def _http_url(value: str | None) -> str | None:
    if value is None:
        return value
    url = urlparse(value)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ValueError(f"{value!r} is not an http(s) URL with a host")
    return value


class PublishTarget(BaseModel):
    """Where `hlm publish` uploads, and the card's license and links."""

    model_config = ConfigDict(extra="forbid")

    repo: str
    revision: str | None = None
    license: str
    endpoint: str | None = None
    repository_url: str | None = None

    @field_validator("repo")
    @classmethod
    def _a_repo_id(cls, v: str) -> str:
        from huggingface_hub.utils import HFValidationError, validate_repo_id

        try:
            validate_repo_id(v)
        except HFValidationError as exc:
            raise ValueError(str(exc).split(". Use")[0]) from None
        return v

    @field_validator("revision")
    @classmethod
    def _a_branch_name(cls, v: str | None) -> str | None:
        if v is not None and (not v or _BAD_REF.search(v)):
            raise ValueError(f"{v!r} is not a valid git branch name")
        return v

    @field_validator("license")
    @classmethod
    def _a_hub_license(cls, v: str) -> str:
        if v not in HUB_LICENSES:
            raise ValueError(unknown_name_message("Hub license", v, list(HUB_LICENSES)))
        return v

    _urls = field_validator("endpoint", "repository_url")(_http_url)

    @classmethod
    def from_flags(cls, **values: str | None) -> PublishTarget:
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            lines = format_validation_error(exc, "hlm publish").splitlines()
            raise UserError("\n".join(_flag_named(line) for line in lines)) from None


def _flag_named(line: str) -> str:
    """`hlm publish: repo: ...` as `--repo: ...`."""
    rest = line.removeprefix("hlm publish: ")
    key, _, message = rest.partition(": ")
    return f"{FLAGS[key]}: {message}" if key in FLAGS else rest
