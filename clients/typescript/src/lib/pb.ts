/** The generated messages of the protocol (from ../../proto, by build.sh). */
export * from "../gen/pusoy/referee/v1/common";
export * from "../gen/pusoy/referee/v1/play_service";
// Helpers both generated files declare; take one copy.
export { DeepPartial, Exact, MessageFns, protobufFileName, protobufPackage } from "../gen/pusoy/referee/v1/common";
