"""Signed bundles from Python with explicit trusted keys (no environment): keygen, a signed
export, inspect with and without the right key, and engines whose trust policy refuses or
accepts the import. Dry-run engines; no PyTorch or GPU needed."""

import os

import pytest

import flashjit

SPEC = {"op": "rmsnorm", "dtype": "bf16"}


def _engine(path, **kw):
    return flashjit.Engine(dry_run=True, arch="sm_90a", cache_dir=str(path),
                           read_environment=False, **kw)


@pytest.fixture
def signed(tmp_path):
    ship = flashjit.bundle_keygen(str(tmp_path / "ship.pem"), str(tmp_path / "ship.pub.pem"))
    other = flashjit.bundle_keygen(str(tmp_path / "other.pem"), str(tmp_path / "other.pub.pem"))
    assert len(ship) == 16 and ship != other
    assert oct(os.stat(tmp_path / "ship.pem").st_mode & 0o777) == "0o600"
    bundle = str(tmp_path / "k.fjbundle")
    with _engine(tmp_path / "src") as e:
        e.build(SPEC)
        e.bundle_export("sm_90a", bundle, sign_key_pem=str(tmp_path / "ship.pem"))
    return tmp_path, bundle, ship


def test_keygen_never_overwrites(signed):
    tmp, _, _ = signed
    with pytest.raises(flashjit.errors.FlashJITError, match="flashjit_bundle_keygen"):
        flashjit.bundle_keygen(str(tmp / "ship.pem"), str(tmp / "x.pub.pem"))
    with pytest.raises(flashjit.InvalidArgumentError, match="private_pem"):
        flashjit.bundle_keygen("", str(tmp / "y.pub.pem"))


def test_inspect_with_trusted_keys(signed):
    tmp, bundle, ship = signed
    plain = flashjit.bundle_inspect(bundle)
    assert plain["ok"] is True and plain["signer"] == ship
    assert plain["signature"].startswith("not verified")
    good = flashjit.bundle_inspect(bundle, trusted_bundle_keys=[str(tmp / "ship.pub.pem")],
                                   require_signed_bundles=True)
    assert good["ok"] is True and good["signature"] == f"verified (key {ship})"
    wrong = flashjit.bundle_inspect(bundle, trusted_bundle_keys=str(tmp / "other.pub.pem"))
    assert wrong["ok"] is False and "not among the trusted keys" in wrong["check"]
    both = flashjit.bundle_inspect(
        bundle, trusted_bundle_keys=f"{tmp / 'other.pub.pem'}:{tmp / 'ship.pub.pem'}")
    assert both["ok"] is True
    with pytest.raises(flashjit.errors.FlashJITError, match="no-such.pem"):
        flashjit.bundle_inspect(bundle, trusted_bundle_keys=[str(tmp / "no-such.pem")])


def test_unsigned_bundle_when_signatures_are_required(tmp_path):
    bundle = str(tmp_path / "u.fjbundle")
    with _engine(tmp_path / "src") as e:
        e.build(SPEC)
        e.bundle_export("sm_90a", bundle)
    assert flashjit.bundle_inspect(bundle)["ok"] is True
    refused = flashjit.bundle_inspect(bundle, require_signed_bundles=True)
    assert refused["ok"] is False and "unsigned" in refused["check"].lower()
    with _engine(tmp_path / "dst", require_signed_bundles=True) as e:
        with pytest.raises(flashjit.errors.PermissionDeniedError):
            e.bundle_import(bundle)


def test_engine_trust_policy_for_import(signed):
    tmp, bundle, ship = signed
    with _engine(tmp / "a", trusted_bundle_keys=[str(tmp / "other.pub.pem")],
                 require_signed_bundles=True) as e:
        assert e.show_config()["trusted_bundle_keys"] == [str(tmp / "other.pub.pem")]
        with pytest.raises(flashjit.errors.PermissionDeniedError, match="trusted"):
            e.bundle_import(bundle)
        assert e.cache_ls() == []
    with _engine(tmp / "b", trusted_bundle_keys=[str(tmp / "ship.pub.pem")],
                 require_signed_bundles=True) as e:
        assert e.bundle_import(bundle) == 1
    # A trusted key that cannot be read fails the engine (never a silent downgrade).
    with pytest.raises(flashjit.errors.FlashJITError, match="missing.pem"):
        _engine(tmp / "c", trusted_bundle_keys=[str(tmp / "missing.pem")])
    # Bundles as read-only layers follow the same policy: the untrusted layer is skipped.
    with _engine(tmp / "d", bundles=[bundle], trusted_bundle_keys=[str(tmp / "other.pub.pem")],
                 disable_jit=True) as e:
        with pytest.raises(flashjit.errors.FlashJITError):
            e.build(SPEC)
    with _engine(tmp / "e", bundles=[bundle], trusted_bundle_keys=[str(tmp / "ship.pub.pem")],
                 disable_jit=True) as e:
        assert e.build(SPEC)["source"].startswith("bundle")
