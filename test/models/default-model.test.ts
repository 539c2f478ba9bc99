// The built-in embedder (use-lite, int8) through the real embedder code: it captures meaning, and a text's
// vector depends on nothing but the text (not its batch, not the thread that embeds it).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { OnnxEmbedder } from "../../src/models/onnx-embedder.ts";
import { defaultModelDir, prepareDefaultModel } from "../../scripts/prepare-default-model.ts";

let embedder: OnnxEmbedder;
beforeAll(async () => {
  await prepareDefaultModel();
  embedder = await OnnxEmbedder.load(defaultModelDir, { threads: 1 });
});
afterAll(() => embedder?.close());

test("onnxruntime starts without its telemetry (which writes /tmp/mat-debug-<pid>.log and calls Microsoft)", async () => {
  expect((await embedder.embed(["Is anyone listening?"], "query")).vectors).toHaveLength(1);
  expect(existsSync(`/tmp/mat-debug-${process.pid}.log`)).toBe(false);
});

/** [sentence, a paraphrase of it, an unrelated sentence] */
const TRIPLES: [string, string, string][] = [
  ["The cat is sleeping on the sofa.", "A cat naps on the couch.", "Interest rates rose again this quarter."],
  ["How do I reset my password?", "What are the steps to change a forgotten password?", "The river flooded the lower fields."],
  ["The meeting was moved to Thursday.", "We rescheduled the meeting for Thursday.", "Penguins live in the southern hemisphere."],
  ["She bought a new car yesterday.", "Yesterday she purchased a new automobile.", "The recipe needs two cups of flour."],
  ["The train to Paris was delayed by an hour.", "Our Paris train left sixty minutes late.", "He plays the violin in an orchestra."],
  ["Drink plenty of water when it is hot.", "Stay hydrated during hot weather.", "The software update failed to install."],
  ["The company reported record profits.", "The firm announced its highest earnings ever.", "My grandmother grows tomatoes."],
  ["The patient has a high fever.", "The sick person's temperature is very high.", "The stadium holds fifty thousand fans."],
  ["Please close the window, it is cold.", "It's chilly in here, could you shut the window?", "The stock market closed higher today."],
  ["The library opens at nine in the morning.", "The library's doors open at 9 am.", "Volcanoes can erupt without warning."],
  ["He lost his keys at the park.", "His keys went missing in the park.", "The orchestra tuned their instruments."],
  ["The flight was cancelled because of the storm.", "The storm forced the airline to cancel the flight.", "She is learning to knit a scarf."],
  ["Children should wear helmets when cycling.", "Kids need a helmet to ride a bike safely.", "The invoice is due at the end of the month."],
  ["The soup is too salty.", "There is far too much salt in this soup.", "The satellite orbits the Earth every ninety minutes."],
  ["Our team won the championship.", "We were victorious in the final of the tournament.", "The printer is out of toner."],
  ["The server crashed during the night.", "Overnight the server went down.", "Bees collect nectar from flowers."],
  ["I can't find my glasses anywhere.", "My spectacles seem to have vanished.", "The city council approved the new budget."],
  ["The museum exhibits ancient Egyptian artifacts.", "Relics from ancient Egypt are on display at the museum.", "The puppy chewed my slippers."],
  ["Turn left at the next traffic light.", "At the upcoming signal, make a left turn.", "Photosynthesis converts light into chemical energy."],
  ["The baby finally fell asleep.", "At last the infant dozed off.", "Quarterly taxes must be filed by April."],
];

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i], 0);

test("a paraphrase is closer than an unrelated sentence, for all 20 hand-written pairs", async () => {
  const { vectors } = await embedder.embed(TRIPLES.flat(), "passage");
  TRIPLES.forEach(([sentence], i) => {
    const [anchor, paraphrase, unrelated] = vectors.slice(3 * i, 3 * i + 3);
    expect({ sentence, paraphraseWins: dot(anchor, paraphrase) > dot(anchor, unrelated) }).toEqual({ sentence, paraphraseWins: true });
  });
});

const SAMPLES = [TRIPLES[0][0], TRIPLES[5][1], "A longer text. ".repeat(60), TRIPLES[12][2], "x"];

test("a text embeds identically alone and in batches of any size and company", async () => {
  const together = (await embedder.embed(SAMPLES, "passage")).vectors;
  const reversed = (await embedder.embed([...SAMPLES].reverse(), "passage")).vectors.reverse();
  for (const [i, text] of SAMPLES.entries()) {
    const alone = (await embedder.embed([text], "passage")).vectors[0];
    expect(Array.from(together[i])).toEqual(Array.from(alone));
    expect(Array.from(reversed[i])).toEqual(Array.from(alone));
  }
});

test("a text embeds identically on another worker thread", async () => {
  const worker = new Worker(new URL("./default-embed-worker.ts", import.meta.url).href);
  const fromWorker = await new Promise<number[][]>((resolve, reject) => {
    worker.onmessage = (event) => resolve(event.data);
    worker.onerror = (event) => reject(new Error(event.message));
    worker.postMessage(SAMPLES);
  });
  worker.terminate();
  const here = (await embedder.embed(SAMPLES, "passage")).vectors;
  expect(fromWorker).toEqual(here.map((v) => Array.from(v)));
});

test("words in capitals read like their lowercase form; mixed case is kept", async () => {
  const embed = async (text: string) => Array.from((await embedder.embed([text], "query")).vectors[0]);
  expect(await embed("MEASUREMENT OF DIELECTRIC CONSTANT BY MICROWAVE TECHNIQUES")).toEqual(
    await embed("measurement of dielectric constant by microwave techniques"),
  );
  expect(await embed("Launch data from NASA, 1969")).toEqual(await embed("Launch data from nasa, 1969"));
  expect(embedder.countTokens("MEASUREMENT")).toBe(embedder.countTokens("measurement"));
  expect(await embed("The Apollo Program")).not.toEqual(await embed("the apollo program"));
});
