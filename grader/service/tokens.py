"""Secrets the service hands out (sign-in tokens, session cookies, CSRF secrets): made from
the system's randomness, stored only as their SHA-256, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import secrets

SECRET_BYTES = 32  # 256 bits: no guessing, and a plain SHA-256 is a safe way to store it
MAX_TOKEN_CHARS = 200  # what a request may present as a token (a longer one is no token)


def new_secret() -> str:
    return secrets.token_urlsafe(SECRET_BYTES)


def digest(secret: str) -> str:
    """The SHA-256 a secret is stored and looked up by (never the secret itself)."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def csrf_of(cookie: str) -> str:
    """A session's CSRF secret, made from its cookie (HMAC): never stored, so that the
    database, which holds only the cookie's SHA-256, holds nothing a form could be forged
    with."""
    return hmac.new(cookie.encode("utf-8", "surrogatepass"), b"grader-serve csrf", hashlib.sha256).hexdigest()


def same(a: str, b: str) -> bool:
    """Whether two secrets (or digests) are equal, in time that does not depend on where
    they differ."""
    return hmac.compare_digest(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass"))


def plausible(presented: object) -> bool:
    """Whether what a request presented could be a secret of ours (else it is not looked up)."""
    return (
        isinstance(presented, str)
        and 0 < len(presented) <= MAX_TOKEN_CHARS
        and presented.isascii()
        and presented.isprintable()
    )
