"""One real local Spark session for the whole test run (never mocked).

Starting Spark costs 20-40 s here, and every job seconds, so every Spark test
shares this session; programs are small.
"""

import pytest


@pytest.fixture(scope="session")
def spark():
    from engine.spark.session import get_session

    session = get_session("local[2]", app_name="datalog-tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def cluster():
    """A standalone master and two workers on 127.0.0.1 (tests.spark.cluster),
    with a Spark Connect server; every JVM stopped at the end, failed tests
    included."""
    from tests.spark.cluster import Cluster

    with Cluster(workers=2, connect=True) as running:
        yield running
