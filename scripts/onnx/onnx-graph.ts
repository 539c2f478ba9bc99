// Builds small ONNX models in code (the test models of scripts/gen-test-models.ts) and serializes them with
// the onnx.proto subset the USE-Lite converter uses.
import { AttributeType, DataType as OnnxDataType, encodeModel, type AttributeProto, type NodeProto, type TensorProto, type ValueInfoProto } from "../use-lite/onnx-proto.ts";

/** The element types the test models use. */
export const DataType = { FLOAT: OnnxDataType.FLOAT, INT64: OnnxDataType.INT64 } as const;
type ElemType = (typeof DataType)[keyof typeof DataType];

export type AttributeValue = number | number[] | { float: number };

function attribute(name: string, value: AttributeValue): AttributeProto {
  if (Array.isArray(value)) return { name, type: AttributeType.INTS, ints: value };
  if (typeof value === "object") return { name, type: AttributeType.FLOAT, f: value.float };
  return { name, type: AttributeType.INT, i: value };
}

export class OnnxGraph {
  private readonly nodes: NodeProto[] = [];
  private readonly initializers: TensorProto[] = [];
  private readonly inputs: ValueInfoProto[] = [];
  private readonly outputs: ValueInfoProto[] = [];
  private counter = 0;

  input(name: string, elemType: ElemType, dims: (number | string)[]): string {
    this.inputs.push({ name, elemType, shape: dims });
    return name;
  }

  output(name: string, elemType: ElemType, dims: (number | string)[]): void {
    this.outputs.push({ name, elemType, shape: dims });
  }

  /** A constant tensor stored in the model; returns its name. */
  tensor(name: string, dims: number[], values: Float32Array | BigInt64Array): string {
    const dataType = values instanceof Float32Array ? DataType.FLOAT : DataType.INT64;
    const raw = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    this.initializers.push({ name, dims, data_type: dataType, raw_data: raw });
    return name;
  }

  floats(name: string, dims: number[], values: ArrayLike<number>): string {
    return this.tensor(name, dims, Float32Array.from(values));
  }

  ints(name: string, dims: number[], values: number[]): string {
    return this.tensor(name, dims, BigInt64Array.from(values.map(BigInt)));
  }

  /** Adds a node and returns its output name (`output` if given, else a fresh one). */
  op(opType: string, inputs: string[], attrs: Record<string, AttributeValue> = {}, output?: string): string {
    const out = output ?? `${opType.toLowerCase()}_${this.counter++}`;
    this.nodes.push({
      op_type: opType,
      name: `${opType}_${this.nodes.length}`,
      input: inputs,
      output: [out],
      attribute: Object.entries(attrs).map(([k, v]) => attribute(k, v)),
    });
    return out;
  }

  serialize(opset = 13): Uint8Array {
    return encodeModel({
      opset,
      producerName: "quarry",
      docString: "",
      metadata: {},
      graph: { name: "graph", nodes: this.nodes, initializers: this.initializers, inputs: this.inputs, outputs: this.outputs },
    });
  }
}
