import { defineConfig } from "vitest/config";

export default defineConfig({
	test: {
		include: ["test/**/*.test.ts"],
		pool: "forks",
		// Hang guards, not deadlines: every test bounds its work, and a busy machine only makes it slower.
		testTimeout: 300_000,
		hookTimeout: 600_000,
		// Pi sessions and child processes are heavy; two cores.
		maxWorkers: 2,
	},
});
