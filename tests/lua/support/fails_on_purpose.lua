-- Fails on purpose. ctest runs it through `cloudlua test` and checks, outside the
-- harness, that the run says "not ok" and exits 1 (lua.harness_reports_a_failure in
-- tests/CMakeLists.txt): the harness files cannot vouch for a harness that passes
-- everything.
test("a check that fails", function() expect(1 + 1).to_equal(3) end)
