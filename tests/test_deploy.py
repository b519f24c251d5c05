import distributed
import pytest

from daskfair.deploy import client_context, close_client, get_client, local_cluster_size


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

    from daskfair.deploy import close_client, get_client

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
