// Schema migration 19 on both stores (SQLiteSchema, PostgresSchema): the pages' per-stack lookup
// tables (`web_stack_envs`, `web_stack_tags`) indexed by stack, so that retention deletes a
// stack's rows with the stack (`deleteOrphanedStacks`): before, they outlived every occurrence
// of their stack and grew without bound. The rows of stacks deleted before this migration go here.
enum WebStackKeySchema {
    /// The same statements in both dialects.
    static let statements = """
        CREATE INDEX IF NOT EXISTS web_stack_envs_stack ON web_stack_envs(stack_key);
        CREATE INDEX IF NOT EXISTS web_stack_tags_stack ON web_stack_tags(stack_key);
        DELETE FROM web_stack_envs WHERE NOT EXISTS (SELECT 1 FROM stacks s WHERE s.key = web_stack_envs.stack_key);
        DELETE FROM web_stack_tags WHERE NOT EXISTS (SELECT 1 FROM stacks s WHERE s.key = web_stack_tags.stack_key)
        """

    /// Deletes the rows of a stack that is being deleted (in the same transaction).
    static let deleteStackRows = [
        "DELETE FROM web_stack_envs WHERE stack_key = ?",
        "DELETE FROM web_stack_tags WHERE stack_key = ?"
    ]
}
