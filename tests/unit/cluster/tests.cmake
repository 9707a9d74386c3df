# Unit tests of sluice::cluster that need no Redis: a mirror's source against its seat's feed
# (the node against a real redis-server is tested end to end: tests/e2e/redis_cluster*_test.cpp).
list(APPEND SLUICE_TEST_SOURCES
    unit/cluster/mirror_source_test.cpp)
list(APPEND SLUICE_TEST_LIBS sluice::cluster sluice::hub)
