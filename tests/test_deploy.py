import distributed
import pytest

from daskfair.runtime.clients import client_context, close_client, get_client, local_cluster_size


def test_local_cluster_size():
    layout = local_cluster_size()
    assert layout["n_workers"] >= 1 and layout["threads_per_worker"] >= 1
    assert local_cluster_size(1)["n_workers"] == 1
    with pytest.raises(ValueError, match="n_workers must be >= 1"):
        local_cluster_size(0)


def test_existing_client_is_used(client):
    assert get_client() is client
    with client_context() as c:
        assert c is client
    assert client.status == "running"  # not closed: it was not ours


def test_environment_address(monkeypatch):
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cl:
        monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", cl.scheduler_address)
        c = get_client()
        try:
            assert c.scheduler.address == cl.scheduler_address
        finally:
            close_client(c)


def test_explicit_address_wins_over_current(client):
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cl:
        c = get_client(cl.scheduler_address)
        try:
            assert c is not client and c.scheduler.address == cl.scheduler_address
        finally:
            close_client(c)
    assert get_client(client.scheduler.address) is client


def test_starts_and_closes_local_cluster(monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    with client_context(n_workers=1, processes=False, dashboard_address=None) as c:
        assert len(c.scheduler_info()["workers"]) == 1
        assert c.submit(sum, [1, 2]).result() == 3
    assert c.status == "closed"


def test_unreachable_scheduler():
    with pytest.raises(ConnectionError, match="Could not reach a Dask scheduler"):
        get_client("tcp://127.0.0.1:9", timeout="1s")


def test_the_local_dashboard_listens_on_loopback_only():
    """The dashboard has no authentication: a LocalCluster started by daskfair serves it on
    127.0.0.1, not on the machine's network address."""
    import socket

    from daskfair.runtime.clients import close_client, get_client

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # no packet is sent: picks the outbound address
            address = probe.getsockname()[0]
        except OSError:
            address = "127.0.0.1"
    if address.startswith("127."):
        pytest.skip("this machine has no address other than loopback")
    client = get_client(n_workers=1, processes=False)  # the default dashboard address
    try:
        port = client.scheduler_info()["services"]["dashboard"]
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        with pytest.raises(OSError), socket.create_connection((address, port), timeout=5):
            pass
    finally:
        close_client(client)


def _listening(pids):
    """(pid, address) of every listening TCP socket of these processes."""
    import psutil

    out = []
    for pid in pids:
        try:
            conns = psutil.Process(pid).net_connections(kind="tcp")
        except psutil.NoSuchProcess:
            continue
        out += [(pid, c.laddr.ip) for c in conns if c.status == psutil.CONN_LISTEN]
    return out


@pytest.mark.cluster
def test_nothing_of_a_local_cluster_listens_beyond_loopback():
    """What `ss -ltn` shows during `daskfair demo`: the scheduler, its dashboard, the workers
    and their nannies of the LocalCluster daskfair starts listen on 127.0.0.1 only."""
    import os

    import psutil

    from daskfair.runtime.clients import close_client, get_client

    client = get_client(n_workers=2)
    try:
        client.wait_for_workers(2, timeout=60)
        pids = [os.getpid(), *(p.pid for p in psutil.Process().children(recursive=True))]
        sockets = _listening(pids)
    finally:
        close_client(client)
    assert len(sockets) >= 5  # scheduler, dashboard, two workers, two nannies
    assert all(ip in ("127.0.0.1", "::1") for _, ip in sockets), sockets


@pytest.mark.cluster
def test_a_tls_scheduler_is_joined_with_the_tls_flags(tmp_path, data_dir, capsys):
    """--scheduler tls://... with --tls-ca-file/--tls-cert/--tls-key runs the job; without
    them the error says which flags are missing."""
    import distributed
    from distributed.security import Security

    from daskfair.cli import main

    security = Security.temporary()
    paths = {}
    for name, pem in (("ca", security.tls_ca_file), ("cert", security.tls_client_cert),
                      ("key", security.tls_client_key)):
        paths[name] = tmp_path / f"{name}.pem"
        paths[name].write_text(pem)
    job = ["fce", "--pool", "yale", "--n-runs", "4", "--n-clusters", "15", "--data-dir",
           str(data_dir), "--no-progress"]
    with distributed.LocalCluster(n_workers=1, processes=False, protocol="tls://",
                                  security=security, dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tls://")
        code = main([*job, "--scheduler", address, "--store", str(tmp_path / "a.zarr")])
        err = capsys.readouterr().err
        assert code == 2 and "--tls-ca-file, --tls-cert and --tls-key" in err, err
        code = main([*job, "--scheduler", address, "--store", str(tmp_path / "b.zarr"),
                     "--tls-ca-file", str(paths["ca"]), "--tls-cert", str(paths["cert"]),
                     "--tls-key", str(paths["key"])])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert f"({address})" in out and "FCE consensus, c = 15" in out
        code = main([*job, "--scheduler", address, "--store", str(tmp_path / "c.zarr"),
                     "--tls-ca-file", str(tmp_path / "none.pem"), "--tls-cert",
                     str(paths["cert"])])
        assert code == 2 and "--tls-ca-file" in capsys.readouterr().err


class _Versions:
    """A client whose get_versions answers what it is given."""

    def __init__(self, versions):
        self.versions = versions

    def get_versions(self, packages=()):
        return self.versions


def _packages(**changes):
    base = {"python": "3.11.2.final.0", "dask": "2026.8.0", "distributed": "2026.8.0",
            "daskfair": "0.1.0", "cloudpickle": "3.1.1", "msgpack": "1.1.0",
            "numpy": "2.4.6"}
    return {"packages": {**base, **changes}}


def test_different_versions_on_a_worker_are_named():
    from daskfair.runtime.clients import VersionMismatchError, check_versions

    same = {"client": _packages(), "scheduler": _packages(python="3.11.9.final.0"),
            "workers": {"tls://10.0.0.7:4000": _packages(numpy="2.3.0")}}
    check_versions(_Versions(same))  # python's micro version and numpy may differ
    other = {**same, "workers": {"tls://10.0.0.7:4000": _packages(daskfair="0.0.9"),
                                 "tls://10.0.0.8:4000": _packages(python="3.12.1")}}
    with pytest.raises(VersionMismatchError) as info:
        check_versions(_Versions(other))
    text = str(info.value)
    assert "daskfair: 0.1.0 on this client, the scheduler, worker tls://10.0.0.8:4000; " \
           "0.0.9 on worker tls://10.0.0.7:4000" in text
    assert "python: 3.11 on this client" in text and "3.12 on worker tls://10.0.0.8" in text
    assert isinstance(info.value, ConnectionError)  # the CLI's one-line error


@pytest.mark.cluster
def test_a_real_cluster_passes_the_version_check(client):
    from daskfair.runtime.clients import check_versions

    check_versions(client)
    assert set(client.get_versions(packages=["daskfair"])["client"]["packages"]) >= {
        "daskfair", "dask", "distributed"}
