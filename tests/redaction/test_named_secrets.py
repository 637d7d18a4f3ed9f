"""Secrets found by the name they are stored under, as classes: each class with variants that must be
redacted and look-alikes that must be left alone."""

from __future__ import annotations

import pytest

from apps.redaction.named import looks_random, secret_name
from apps.redaction.redactor import redact

CLASSES = {
    "assignment": [
        ("SECRET_KEY = 'django-insecure-k#2@x!9v$(m)^&w*3n+q_l=0z%r8y'", "k#2@x!9v$(m)^&w*3n+q_l=0z%r8y"),
        ('"secretKey": "Zx8#kq!2Lm@9vB$w"', "Zx8#kq!2Lm@9vB$w"),
        ("export SECRET_KEY_BASE=3f8a9b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a", "3f8a9b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"),
        ('ADMIN_PASSWORD_PROD := "Tr0ub4dor&3xyz"', "Tr0ub4dor&3xyz"),
    ],
    "authorization": [
        (
            "'HTTP_AUTHORIZATION': 'Token 9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b'",
            "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b",
        ),
        ("Proxy-Authorization: Custom k8s-Zq2x9Lm4Vb7", "k8s-Zq2x9Lm4Vb7"),
        ("authorization=Signature keyId=abc123,signature=Zm9vYmFy", "keyId=abc123"),
    ],
    "name_value": [
        ("- name: DB_PASSWORD\n  value: hunter2-prod", "hunter2-prod"),
        ('- name: GITHUB_TOKEN\n  # rotated monthly\n  value: "gho_notreally_8f7a6b5c"', "gho_notreally_8f7a6b5c"),
        ('{"name":"JWT_SECRET","value":"changeme-but-never-did"}', "changeme-but-never-did"),
        ('{ value = "S3cr3t!Pass", name = "DATABASE_PASSWORD" }', "S3cr3t!Pass"),
    ],
    "cli_flag": [
        ("docker login -u ci -p hunter2 registry.example.com", "hunter2"),
        ("buildah login --username ci -p 'S3cr3t!Reg' quay.io", "S3cr3t!Reg"),
        ("sqlcmd -S db -U sa -P Str0ngPassw0rd", "Str0ngPassw0rd"),
        ("htpasswd -b -c /etc/nginx/.htpasswd admin adm1nPass", "adm1nPass"),
    ],
}
LOOK_ALIKES = [
    'CACHE_KEY = "user:{id}:profile"',
    'idempotency_key: "3f2a9c1e-8b7d-4e6f-a5c4-0123456789ab"',
    "SECRET_KEY_FILE=/run/secrets/django_key",
    "KMS_KEY_ARN=arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    'TOKEN_PATTERN = r"^[A-Za-z0-9_\\-]{20,}$"',
    "- name: SORT_KEY\n  value: created_at",
    "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db-secret",
    '{"name": "ENCRYPTION_KEY_ID", "value": "alias/prod-key"}',
    "docker login -u deploy --password-stdin registry.example.com",
    "docker run -p 8080:80 nginx",
    "WARNING! Using --password via the CLI is insecure. Use --password-stdin.",
    "Authorization: failed for user bob",
    "the authorization: basic scheme is deprecated",
]


@pytest.mark.parametrize(
    ("text", "secret"), [case for cases in CLASSES.values() for case in cases], ids=lambda value: str(value)[:30]
)
def test_it_redacts_every_variant_of_each_class(text: str, secret: str) -> None:
    redacted = redact(text).text
    assert secret not in redacted and "[REDACTED:" in redacted, redacted


@pytest.mark.parametrize("text", LOOK_ALIKES, ids=lambda value: value[:30])
def test_it_leaves_the_look_alikes_alone(text: str) -> None:
    result = redact(text)
    assert result.text == text, [(f.type, text[f.start : f.end]) for f in result.findings]


def test_a_name_says_whether_it_holds_a_secret() -> None:
    assert secret_name("DJANGO_SECRET_KEY") == "secret" and secret_name("dbPassword") == "password"
    assert secret_name("SECRET_KEY_FILE") is None and secret_name("idempotencyKey") is None
    assert secret_name("TOKENIZER") is None and secret_name("monkey") is None


def test_random_looking_values_are_told_from_words_paths_and_ids() -> None:
    assert looks_random("k#2@x!9v$(m)^&w*3n+q_l=0z%r8y") and looks_random("3f8a9b7c6d5e4f3a2b1c0d9e8f7a6b5c")
    for value in ("created_at", "layers.Layer", "/run/secrets/x", "3f2a9c1e-8b7d-4e6f-a5c4-0123456789ab", "short1!"):
        assert not looks_random(value), value
