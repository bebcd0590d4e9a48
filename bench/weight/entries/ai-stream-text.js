// Page entry: the Vercel AI SDK core in the browser, one streamed answer from an OpenAI-compatible endpoint
// (`streamText` with `@ai-sdk/openai`), text deltas handed to the page.
import { streamText } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';

const openai = createOpenAI({ baseURL: '/v1', apiKey: 'set-by-the-page' });

export async function ask(prompt, onText) {
  const result = streamText({ model: openai('gpt-4o-mini'), prompt });
  for await (const text of result.textStream) onText(text);
}
