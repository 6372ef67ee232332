// Types of scripts/readme-snippets.mjs, for the tests that import it.

/** A fenced block of README.md. */
export interface ReadmeBlock {
  /** The fence's language, '' for none. */
  lang: string;
  /** Its text, ending in a newline. */
  code: string;
  /** Its first line in README.md (1-based). */
  line: number;
  /** The `##` heading above it. */
  section: string;
  /** The `###` heading above it, or the section's. */
  heading: string;
}

export function readmeBlocks(text?: string): ReadmeBlock[];
/** 'setup', 'file' or 'body' for a TypeScript block; otherwise its language ('text' for none). */
export function kindOf(block: ReadmeBlock): string;
export function generate(all?: ReadmeBlock[]): Map<string, string>;
