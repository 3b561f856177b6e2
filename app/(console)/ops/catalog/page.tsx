import { Suspense } from 'react';
import { CatalogPage } from '../_components/catalog';

export default function OpsCatalogPage() {
  return (
    <Suspense>
      <CatalogPage />
    </Suspense>
  );
}
