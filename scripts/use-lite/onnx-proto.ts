// The subset of onnx.proto (field numbers as in github.com/onnx/onnx/blob/main/onnx/onnx.proto)
// needed to write an inference-only model, encoded with protobufjs.
import protobuf from "protobufjs";

const schema = `
syntax = "proto3";
package onnx;
message AttributeProto {
  string name = 1;
  float f = 2;
  int64 i = 3;
  bytes s = 4;
  TensorProto t = 5;
  repeated float floats = 7;
  repeated int64 ints = 8;
  int32 type = 20;
}
message ValueInfoProto { string name = 1; TypeProto type = 2; }
message NodeProto {
  repeated string input = 1;
  repeated string output = 2;
  string name = 3;
  string op_type = 4;
  repeated AttributeProto attribute = 5;
}
message StringStringEntryProto { string key = 1; string value = 2; }
message ModelProto {
  int64 ir_version = 1;
  string producer_name = 2;
  string producer_version = 3;
  string doc_string = 6;
  GraphProto graph = 7;
  repeated OperatorSetIdProto opset_import = 8;
  repeated StringStringEntryProto metadata_props = 14;
}
message GraphProto {
  repeated NodeProto node = 1;
  string name = 2;
  repeated TensorProto initializer = 5;
  repeated ValueInfoProto input = 11;
  repeated ValueInfoProto output = 12;
}
message TensorProto {
  repeated int64 dims = 1;
  int32 data_type = 2;
  string name = 8;
  bytes raw_data = 9;
  repeated StringStringEntryProto external_data = 13;
  int32 data_location = 14;
}
message TensorShapeProto {
  message Dimension { oneof value { int64 dim_value = 1; string dim_param = 2; } }
  repeated Dimension dim = 1;
}
message TypeProto {
  message Tensor { int32 elem_type = 1; TensorShapeProto shape = 2; }
  oneof value { Tensor tensor_type = 1; }
}
message OperatorSetIdProto { string domain = 1; int64 version = 2; }
`;

export const DataType = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7 } as const;
export const AttributeType = { FLOAT: 1, INT: 2, STRING: 3, FLOATS: 6, INTS: 7 } as const;

export interface TensorProto {
  name: string;
  dims: number[];
  data_type: number;
  raw_data: Uint8Array;
  /** Set by encodeModelWithExternalData: where the values are (location, offset, length) instead of raw_data. */
  external_data?: { key: string; value: string }[];
  data_location?: number;
}
export interface AttributeProto {
  name: string;
  type: number;
  f?: number;
  i?: number;
  s?: Uint8Array;
  floats?: number[];
  ints?: number[];
}
export interface NodeProto {
  name: string;
  op_type: string;
  input: string[];
  output: string[];
  attribute: AttributeProto[];
}
/** A dimension is a fixed size or a symbolic name such as "batch". */
export interface ValueInfoProto {
  name: string;
  elemType: number;
  shape: (number | string)[];
}
export interface ModelProto {
  opset: number;
  producerName: string;
  docString: string;
  metadata: Record<string, string>;
  graph: { name: string; nodes: NodeProto[]; initializers: TensorProto[]; inputs: ValueInfoProto[]; outputs: ValueInfoProto[] };
}

const IR_VERSION = 8; // the IR version that goes with opset 17

const modelType = protobuf.parse(schema, { keepCase: true }).root.lookupType("onnx.ModelProto");

function valueInfo(v: ValueInfoProto) {
  return {
    name: v.name,
    type: {
      tensor_type: {
        elem_type: v.elemType,
        shape: { dim: v.shape.map((d) => (typeof d === "number" ? { dim_value: d } : { dim_param: d })) },
      },
    },
  };
}

/** Where a tensor with external data keeps its values (TensorProto.DataLocation). */
const EXTERNAL = 1;
/** Each tensor's values start on a page boundary of the data file, so that a runtime may map them. */
const EXTERNAL_ALIGNMENT = 4096;

/**
 * The model with the values of its initializers of at least `minBytes` moved into a file of their own,
 * `location` (a name next to the model's file), as ONNX external data. ONNX Runtime then reads those
 * values straight into its tensors: a session of the default model (14 MB of weights) was created in
 * ~100 ms instead of ~230 ms, where the parse of one 14 MB message copied them first (same outputs).
 */
export function encodeModelWithExternalData(model: ModelProto, location: string, minBytes: number): { model: Uint8Array; data: Uint8Array } {
  const pieces: Uint8Array[] = [];
  let length = 0;
  const initializers = model.graph.initializers.map((tensor): TensorProto => {
    if (tensor.raw_data.byteLength < minBytes) return tensor;
    const padding = (EXTERNAL_ALIGNMENT - (length % EXTERNAL_ALIGNMENT)) % EXTERNAL_ALIGNMENT;
    pieces.push(new Uint8Array(padding), tensor.raw_data);
    const offset = length + padding;
    length = offset + tensor.raw_data.byteLength;
    const external_data = [
      { key: "location", value: location },
      { key: "offset", value: String(offset) },
      { key: "length", value: String(tensor.raw_data.byteLength) },
    ];
    return { ...tensor, raw_data: new Uint8Array(0), external_data, data_location: EXTERNAL };
  });
  return { model: encodeModel({ ...model, graph: { ...model.graph, initializers } }), data: Buffer.concat(pieces) };
}

export function encodeModel(model: ModelProto): Uint8Array {
  const message = modelType.fromObject({
    ir_version: IR_VERSION,
    producer_name: model.producerName,
    doc_string: model.docString,
    opset_import: [{ domain: "", version: model.opset }],
    metadata_props: Object.entries(model.metadata).map(([key, value]) => ({ key, value })),
    graph: {
      name: model.graph.name,
      node: model.graph.nodes,
      initializer: model.graph.initializers,
      input: model.graph.inputs.map(valueInfo),
      output: model.graph.outputs.map(valueInfo),
    },
  });
  return modelType.encode(message).finish();
}
