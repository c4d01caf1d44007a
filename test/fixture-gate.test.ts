// The shared fixture's gate: its tests skip without it on a workstation, and run (and fail) in CI.
import { describe, expect, it } from "vitest";
import { skipsWithoutFixture } from "../harness/fixture.ts";

describe("tests that need the shared fixture", () => {
	it("skip only when it is missing outside CI; in CI a missing fixture fails them", () => {
		expect(skipsWithoutFixture(false, undefined)).toBe(true);
		expect(skipsWithoutFixture(false, "false")).toBe(true);
		expect(skipsWithoutFixture(false, "true")).toBe(false);
		expect(skipsWithoutFixture(false, "1")).toBe(false);
		expect(skipsWithoutFixture(true, undefined)).toBe(false);
		expect(skipsWithoutFixture(true, "true")).toBe(false);
	});
});
