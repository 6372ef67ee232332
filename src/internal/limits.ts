/** The longest delay a Node timer honours (about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;
