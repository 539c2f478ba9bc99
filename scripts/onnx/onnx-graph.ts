// Builds small ONNX models in code and serializes them with protobufjs and the subset of onnx.proto
// (field numbers as in the official onnx.proto3) that plain feed-forward graphs need.
import protobuf from "protobufjs";

const ONNX_PROTO_SUBSET = `
syntax = "proto3";
package onnx;
message ModelProto {
  int64 ir_version = 1;
  string producer_name = 2;
  repeated OperatorSetIdProto opset_import = 8;
  GraphProto graph = 7;
}
message OperatorSetIdProto { string domain = 1; int64 version = 2; }
message GraphProto {
  repeated NodeProto node = 1;
  string name = 2;
  repeated TensorProto initializer = 5;
  repeated ValueInfoProto input = 11;
  repeated ValueInfoProto output = 12;
}
message NodeProto {
  repeated string input = 1;
  repeated string output = 2;
  string name = 3;
  string op_type = 4;
  repeated AttributeProto attribute = 5;
}
message AttributeProto {
  string name = 1;
  float f = 2;
  int64 i = 3;
  repeated int64 ints = 8;
  int32 type = 20;
}
message TensorProto {
  repeated int64 dims = 1;
  int32 data_type = 2;
  string name = 8;
  bytes raw_data = 9;
}
message ValueInfoProto { string name = 1; TypeProto type = 2; }
message TypeProto { TensorTypeProto tensor_type = 1; }
message TensorTypeProto { int32 elem_type = 1; TensorShapeProto shape = 2; }
message TensorShapeProto { repeated Dimension dim = 1; }
message Dimension { int64 dim_value = 1; string dim_param = 2; }
`;

const ModelProto = protobuf.parse(ONNX_PROTO_SUBSET, { keepCase: true }).root.lookupType("onnx.ModelProto");

/** onnx.TensorProto.DataType values. */
export const DataType = { FLOAT: 1, INT64: 7 } as const;
type ElemType = (typeof DataType)[keyof typeof DataType];

/** onnx.AttributeProto.AttributeType values for the attribute kinds supported here. */
const AttributeType = { FLOAT: 1, INT: 2, INTS: 7 } as const;

export type AttributeValue = number | number[] | { float: number };

function attribute(name: string, value: AttributeValue) {
  if (Array.isArray(value)) return { name, type: AttributeType.INTS, ints: value };
  if (typeof value === "object") return { name, type: AttributeType.FLOAT, f: value.float };
  return { name, type: AttributeType.INT, i: value };
}

/** A dimension is a fixed size or a symbolic name such as "batch". */
function shapeOf(dims: (number | string)[]) {
  return { dim: dims.map((d) => (typeof d === "number" ? { dim_value: d } : { dim_param: d })) };
}

export class OnnxGraph {
  private readonly nodes: object[] = [];
  private readonly initializers: object[] = [];
  private readonly inputs: object[] = [];
  private readonly outputs: object[] = [];
  private counter = 0;

  input(name: string, elemType: ElemType, dims: (number | string)[]): string {
    this.inputs.push({ name, type: { tensor_type: { elem_type: elemType, shape: shapeOf(dims) } } });
    return name;
  }

  output(name: string, elemType: ElemType, dims: (number | string)[]): void {
    this.outputs.push({ name, type: { tensor_type: { elem_type: elemType, shape: shapeOf(dims) } } });
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
    const model = {
      ir_version: 8,
      producer_name: "quarry",
      opset_import: [{ domain: "", version: opset }],
      graph: {
        name: "graph",
        node: this.nodes,
        initializer: this.initializers,
        input: this.inputs,
        output: this.outputs,
      },
    };
    return ModelProto.encode(ModelProto.fromObject(model)).finish();
  }
}
