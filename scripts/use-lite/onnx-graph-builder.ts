// Accumulates nodes and initializers for one ONNX graph. Every node is named after its output
// so the graph reads like the TF graph it came from.
import { AttributeType, DataType, type AttributeProto, type NodeProto, type TensorProto } from "./onnx-proto.ts";

export type Attribute = { int: number } | { float: number } | { ints: number[] };
export const int = (value: number): Attribute => ({ int: value });
export const float = (value: number): Attribute => ({ float: value });
export const ints = (values: number[]): Attribute => ({ ints: values });

function toAttributeProto(name: string, value: Attribute): AttributeProto {
  if ("int" in value) return { name, type: AttributeType.INT, i: value.int };
  if ("float" in value) return { name, type: AttributeType.FLOAT, f: value.float };
  return { name, type: AttributeType.INTS, ints: value.ints };
}

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

export class OnnxGraphBuilder {
  readonly nodes: NodeProto[] = [];
  readonly initializers: TensorProto[] = [];
  private readonly names = new Set<string>();

  private claim(name: string): string {
    if (this.names.has(name)) throw new Error(`duplicate tensor name ${name}`);
    this.names.add(name);
    return name;
  }

  floatTensor(name: string, data: Float32Array, dims: number[]): string {
    if (dims.reduce((a, b) => a * b, 1) !== data.length) throw new Error(`${name}: ${data.length} values for dims ${dims}`);
    this.initializers.push({ name: this.claim(name), dims, data_type: DataType.FLOAT, raw_data: bytesOf(data) });
    return name;
  }

  floatScalar(name: string, value: number): string {
    return this.floatTensor(name, Float32Array.of(value), []);
  }

  int8Tensor(name: string, data: Int8Array, dims: number[]): string {
    if (dims.reduce((a, b) => a * b, 1) !== data.length) throw new Error(`${name}: ${data.length} values for dims ${dims}`);
    this.initializers.push({ name: this.claim(name), dims, data_type: DataType.INT8, raw_data: bytesOf(data) });
    return name;
  }

  int64Tensor(name: string, values: number[]): string {
    const data = BigInt64Array.from(values.map(BigInt));
    this.initializers.push({ name: this.claim(name), dims: [values.length], data_type: DataType.INT64, raw_data: bytesOf(data) });
    return name;
  }

  /** Adds a single-output node; its output tensor is called `name`. */
  op(name: string, opType: string, inputs: string[], attributes: Record<string, Attribute> = {}): string {
    return this.opWithOutputs(name, opType, inputs, [name], attributes)[0];
  }

  /** Adds a node with several outputs, named `name:0`, `name:1`, … */
  opWithOutputs(name: string, opType: string, inputs: string[], outputs: string[] | number, attributes: Record<string, Attribute> = {}): string[] {
    const outputNames = typeof outputs === "number" ? Array.from({ length: outputs }, (_, i) => `${name}:${i}`) : outputs;
    outputNames.forEach((o) => this.claim(o));
    this.nodes.push({
      name,
      op_type: opType,
      input: inputs,
      output: outputNames,
      attribute: Object.entries(attributes).map(([key, value]) => toAttributeProto(key, value)),
    });
    return outputNames;
  }
}
