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
