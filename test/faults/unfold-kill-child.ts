// A child process for the unfold kill test: runs `pi-fold unfold` (argv) and SIGKILLs itself right
// after the KILL_AT-th step of its write of the temp copy (1 open, 2 and 3 its two writes, 4 fsync,
// 5 close, 6 the rename over the session file): a real kill -9 at an exact point of the write.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const killAt = Number(process.env.KILL_AT ?? "0");
const TEMP = ".pi-fold-unfold-";
let step = 0;
let tempFd = -1;
const after = () => {
	if (++step === killAt) process.kill(process.pid, "SIGKILL");
};
const { openSync, writeSync, fsyncSync, closeSync, renameSync } = fs;
fs.openSync = ((path: fs.PathLike, ...rest: never[]) => {
	const fd = (openSync as (...a: unknown[]) => number)(path, ...rest);
	if (String(path).includes(TEMP)) {
		tempFd = fd;
		after();
	}
	return fd;
}) as typeof fs.openSync;
fs.writeSync = ((fd: number, ...rest: never[]) => {
	const n = (writeSync as (...a: unknown[]) => number)(fd, ...rest);
	if (fd === tempFd) after();
	return n;
}) as typeof fs.writeSync;
fs.fsyncSync = (fd: number) => {
	fsyncSync(fd);
	if (fd === tempFd) after();
};
fs.closeSync = (fd: number) => {
	closeSync(fd);
	if (fd === tempFd) after();
};
fs.renameSync = (from: fs.PathLike, to: fs.PathLike) => {
	renameSync(from, to);
	if (String(from).includes(TEMP)) after();
};
syncBuiltinESMExports(); // unfold-command.ts imports these from "node:fs" by name: hand it these

await import("../../src/cli/cli.ts");
