// The compilers of the routes' schemas, shared by every app this process
// builds. Fastify's default makes a new Ajv instance and a new serializer
// factory for each app, so each app compiles every route's schemas again
// (about 200 ms of CPU for this API). A server builds one app, but the CLI
// builds one per command and the test suite hundreds in a process. These are
// Fastify's own default compilers (@fastify/ajv-compiler's pool of Ajv
// instances, keyed by their options; fast-json-stringify), created once here
// instead of once per app: Ajv keeps each compiled schema keyed by the schema
// object, and the serializers are kept the same way, so the routes' shared
// TypeBox schemas compile once. Validation and serialisation are unchanged.
import AjvCompiler from '@fastify/ajv-compiler'
import SerializerSelector from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

type SerializerFactory = ReturnType<typeof SerializerSelector>
type RouteSerializer = ReturnType<ReturnType<SerializerFactory>>
type RouteDefinition = Parameters<ReturnType<SerializerFactory>>[0]

const buildValidator = AjvCompiler()
const serializerFactory = SerializerSelector()

/**
 * Serializers by options (external schemas and fast-json-stringify options,
 * as JSON) and then by schema object: weakly, so an app's schemas that no
 * other app shares go when that app does.
 */
const serializers = new Map<string, WeakMap<object, RouteSerializer>>()

function buildSerializer(externalSchemas: unknown, serializerOpts: unknown): (route: RouteDefinition) => RouteSerializer {
  const compile = serializerFactory(externalSchemas as Parameters<SerializerFactory>[0], serializerOpts as Parameters<SerializerFactory>[1])
  const key = JSON.stringify([externalSchemas ?? {}, serializerOpts ?? {}])
  let bySchema = serializers.get(key)
  if (!bySchema) {
    bySchema = new WeakMap()
    serializers.set(key, bySchema)
  }
  const cache = bySchema
  return (route) => {
    const schema = route.schema as object
    let serializer = cache.get(schema)
    if (!serializer) {
      serializer = compile(route)
      cache.set(schema, serializer)
    }
    return serializer
  }
}

/** Fastify's `schemaController` option: its default compilers, shared by the apps of this process. */
export const sharedSchemaController: NonNullable<FastifyServerOptions['schemaController']> = {
  compilersFactory: {
    buildValidator: buildValidator as never,
    buildSerializer: buildSerializer as never,
  },
}
