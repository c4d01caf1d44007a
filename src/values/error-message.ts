/** What went wrong, as one line for a problem or a refusal: an Error's message, else the value as text. */
export function errorMessage(err: unknown): string {
	return err instanceof Error ? err.message : String(err);
}
