from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from sparkcat.runtime.distributed.signing import (
    SIGNATURE_ALGORITHM_HEADER,
    SIGNATURE_HEADER,
    InternalRequestSignature,
    SessionKey,
    key_length,
    sign,
    verify_internal_request,
)
from sparkcat.runtime.rest.errors import ConnectRestError

KEY = SessionKey(b"k" * 32, "HmacSHA256", 1_700_000_000_000)
BODY = b'[{"connector.class":"X","task.id":"0"}]'
ALGORITHMS = ["HmacSHA256"]


def test_sign_is_base64_hmac_of_body() -> None:
    headers = sign(KEY, BODY)
    expected = base64.b64encode(hmac.new(KEY.key, BODY, hashlib.sha256).digest()).decode()
    assert headers == {SIGNATURE_HEADER: expected, SIGNATURE_ALGORITHM_HEADER: "HmacSHA256"}


def test_valid_signature_passes_any_header_case() -> None:
    headers = {k.lower(): v for k, v in sign(KEY, BODY).items()}
    verify_internal_request(BODY, headers, KEY, ALGORITHMS)


def _status(body: bytes, headers: dict[str, str], key: SessionKey | None) -> tuple[int, str]:
    with pytest.raises(ConnectRestError) as info:
        verify_internal_request(body, headers, key, ALGORITHMS)
    return info.value.status, info.value.message


@pytest.mark.parametrize("drop", [SIGNATURE_HEADER, SIGNATURE_ALGORITHM_HEADER])
def test_missing_header_400(drop: str) -> None:
    headers = {k: v for k, v in sign(KEY, BODY).items() if k != drop}
    assert _status(BODY, headers, KEY) == (400, "Internal request missing required signature")


def test_unknown_algorithm_400() -> None:
    headers = {**sign(KEY, BODY), SIGNATURE_ALGORITHM_HEADER: "HmacFoo"}
    assert _status(BODY, headers, KEY) == (400, "Algorithm HmacFoo not available")


def test_algorithm_not_permitted_400() -> None:
    status, message = _status(BODY, sign(KEY, BODY, "HmacSHA512"), KEY)
    assert status == 400
    assert message.startswith(
        "This worker does not support the 'HmacSHA512' key signing algorithm used by other "
        "workers. This worker is currently configured to use: [HmacSHA256]."
    )


def test_bad_base64_400() -> None:
    headers = {**sign(KEY, BODY), SIGNATURE_HEADER: "not base64!"}
    assert _status(BODY, headers, KEY)[0] == 400


def test_no_session_key_yet_503() -> None:
    assert _status(BODY, sign(KEY, BODY), None) == (
        503,
        "This worker is still starting up and has not been able to read a session key from "
        "the config topic yet",
    )


@pytest.mark.parametrize("forgery", ["other key", "other body"])
def test_forged_signature_403(forgery: str) -> None:
    if forgery == "other key":
        headers = sign(SessionKey(b"x" * 32, "HmacSHA256", 0), BODY)
    else:
        headers = sign(KEY, BODY + b" ")
    assert _status(BODY, headers, KEY) == (403, "Internal request contained invalid signature.")


def test_from_headers_none_without_headers() -> None:
    assert InternalRequestSignature.from_headers(BODY, {}) is None


def test_generated_keys_and_record() -> None:
    key = SessionKey.generate("HmacSHA256", None, 5)
    assert len(key.key) == 32 and key.creation_timestamp == 5
    assert len(SessionKey.generate("HmacSHA512", None, 5).key) == 64
    assert len(SessionKey.generate("HmacSHA256", 129, 5).key) == 17
    assert SessionKey.from_record(key.to_record()) == key
    assert set(key.to_record()) == {"key", "algorithm", "creation-timestamp"}
    assert key.expires_at(1000) == 1005
    with pytest.raises(ValueError, match="at least 40 bits"):
        key_length("HmacSHA256", 32)


def test_any_object_with_a_key_and_no_secret_in_repr() -> None:
    class StoreKey:
        key = KEY.key

    verify_internal_request(BODY, sign(StoreKey(), BODY), StoreKey(), ALGORITHMS)
    assert "kkkk" not in repr(KEY) and "a2tr" not in repr(KEY)


@pytest.mark.parametrize(
    ("algorithm", "signature", "key_bytes"),
    [
        ("HmacSHA256", "2ZKZte6y1GcAUE7ki14QBBlDu8dC6qZXS5SrH+hntDM=", 32),
        ("HmacSHA1", "DBY58fXNq7BRMWUHdpQsQEZULvw=", 64),
        ("HmacSHA512", "GYtf1Kp1M+ouPyWFEYV0tTO745OswuJ9UxYs2O64ejwADvU6p4GZ9JGrEooJ4UhN"
                       "XawocuzVZWLmaOOe8nX7YA==", 64),
        ("HmacMD5", "MsBBPtdcHuNSMFAsi6bN+w==", 64),
    ],
)  # fmt: skip
def test_matches_the_jvm(algorithm: str, signature: str, key_bytes: int) -> None:
    """Values computed by the JVM's javax.crypto Mac and KeyGenerator (what Kafka uses)."""
    assert sign(b"k" * 32, b'[{"a":"b"}]', algorithm)[SIGNATURE_HEADER] == signature
    assert key_length(algorithm) == key_bytes
